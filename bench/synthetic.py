"""A synthetic corpus at CogniBench-L scale, for benchmarks.

24,000 turns of 10 pre-split sentences each, with references of about 700
words, 4 turns per dialogue. The text is original: sentences assembled at
random (seeded) from the word lists below; meaningless but shaped like
encyclopaedic prose, which is all a benchmark of import, export or a
workspace needs.

Two uses:

* ``write_jsonl(path, turns=..., ...)`` writes the corpus in the project's
  JSONL format (docs/jsonl-format.md), for ``import_jsonl`` and the import
  benchmark;
* ``create_synthetic_project(slug, turns, sentences_per_turn, reference_words)``
  creates a project with that corpus straight in the database (through the
  same bulk writer the importers use), for benchmarks of the workspace, gold
  and API at scale.

``write_jsonl(path, ..., language="zh")`` writes a Chinese corpus instead: the same shape, sentences
assembled from Chinese word lists, and no ``sentences`` field, so the studio cuts every response into
units on import (the import benchmark's Chinese row).

Command line: ``.venv/bin/python bench/synthetic.py OUT.jsonl [--turns N] [--language zh]``.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

SUBJECTS = (
    "the northern basin", "the old harbour", "the river delta", "the coastal railway", "the city council",
    "the research station", "the mountain pass", "the village school", "the eastern province", "the royal library",
    "the cotton mill", "the observatory", "the island ferry", "the salt marsh", "the glass factory",
    "the orchestra", "the botanical garden", "the mining company", "the lighthouse", "the cathedral choir",
    "the local newspaper", "the football club", "the trade union", "the weather service", "the canal network",
)
VERBS = (
    "was founded in", "expanded during", "was rebuilt after", "declined sharply in", "was renamed in",
    "doubled its output in", "first opened to visitors in", "was merged with its neighbour in",
    "lost most of its funding in", "was restored between", "gained national attention in", "was surveyed in",
)
YEARS = tuple(str(year) for year in range(1820, 2021, 3))
COMPLEMENTS = (
    "after a long dispute over land", "with support from local families", "despite repeated floods",
    "under a new charter", "following a change of ownership", "as part of a regional plan",
    "when the old bridge collapsed", "during a period of rapid growth", "with money raised by subscription",
    "because demand for timber rose", "after two failed attempts", "under the supervision of engineers",
)
OPINIONS = (
    "This suggests that the project was more ambitious than its founders admitted.",
    "It is likely that the decision shaped the later history of the region.",
    "Many visitors consider it the most remarkable building of its kind.",
    "The change probably reflected wider economic pressures.",
    "Such growth could not have happened without cheap transport.",
    "Historians still disagree about the reasons for its decline.",
    "It remains an important example of careful planning.",
    "The result was arguably a compromise that pleased nobody.",
)
FILLERS = ("Sure!", "Great question.", "Happy to help with that.", "I hope this helps!")
TOPICS = ("history", "geography and places", "science", "engineering", "arts", "society")
MODELS = ("model-a", "model-b", "model-c")
LABELS = ("faithful", "faithful", "faithful", "invented", "speculative", "reliable", "unequivocal",
          "misleading", "irrelevant")


# The Chinese corpus: sentences end in 。！？ (as the studio's segmenter expects), numbers and a few Latin words inside.
ZH_SUBJECTS = ("北方盆地", "老港口", "河口三角洲", "沿海铁路", "市议会", "研究站", "山口", "乡村学校", "东部省份", "皇家图书馆",
               "棉纺厂", "天文台", "海岛渡轮", "盐沼", "玻璃厂", "管弦乐团", "植物园", "矿业公司", "灯塔", "大教堂合唱团")
ZH_VERBS = ("始建于", "扩建于", "重建于", "衰落于", "更名于", "产量翻倍于", "首次对游客开放于", "与邻近机构合并于", "被调查于")
ZH_COMPLEMENTS = ("经过一场漫长的土地纠纷之后", "在当地家庭的支持下", "尽管洪水反复发生", "依照一项新的章程", "在所有权变更之后",
                  "作为区域规划的一部分", "在旧桥倒塌之时", "在快速发展的时期", "依靠认购筹集的资金", "在工程师的监督下")
ZH_OPINIONS = ("这说明该项目比创始人承认的更有雄心！", "这一决定很可能影响了该地区后来的历史。", "许多游客认为它是同类建筑中最出色的。",
               "这种变化大概反映了更广泛的经济压力。", "如果没有廉价的交通，这样的增长能实现吗？", "历史学家至今仍对其衰落的原因存在分歧。",
               "按GDP计算，增长率约为3.5%。")
ZH_FILLERS = ("当然！", "好问题。", "很高兴为您解答。")


def _zh_fact(rng: random.Random) -> str:
    return f"{rng.choice(ZH_SUBJECTS)}{rng.choice(ZH_VERBS)}{rng.choice(YEARS)}年，{rng.choice(ZH_COMPLEMENTS)}。"


def _fact(rng: random.Random) -> str:
    subject = rng.choice(SUBJECTS)
    return f"{subject[0].upper()}{subject[1:]} {rng.choice(VERBS)} {rng.choice(YEARS)} {rng.choice(COMPLEMENTS)}."


class _Pool:
    """Pre-assembled sentences, so generating 24,000 turns takes seconds."""

    def __init__(self, rng: random.Random, size: int = 4000, language: str = "en"):
        self.chinese = language == "zh"
        fact = _zh_fact if self.chinese else _fact
        self.facts = [fact(rng) for _ in range(size)]
        self.fillers, self.opinions = (ZH_FILLERS, ZH_OPINIONS) if self.chinese else (FILLERS, OPINIONS)
        self.joiner = "" if self.chinese else " "

    def sentences(self, rng: random.Random, count: int) -> list[str]:
        out = []
        for _ in range(count):
            roll = rng.random()
            if roll < 0.05:
                out.append(rng.choice(self.fillers))
            elif roll < 0.30:
                out.append(rng.choice(self.opinions))
            else:
                out.append(rng.choice(self.facts))
        return out

    def reference(self, rng: random.Random, words: int) -> str:
        """About ``words`` words (characters in Chinese: the studio's word count, domain/languages.py)."""
        parts, count = [], 0
        while count < words:
            sentence = rng.choice(self.facts)
            parts.append(sentence)
            count += len(sentence) if self.chinese else sentence.count(" ") + 1
        return self.joiner.join(parts)


def iter_turn_objects(turns=24_000, sentences_per_turn=10, reference_words=700, turns_per_dialogue=4,
                      labelled=True, seed=7, language="en"):
    """Yield one JSON-able object per turn, in the project's JSONL format.

    ``language="zh"``: a Chinese corpus without units (and so without gold): the studio cuts each response.
    """
    from annotator.domain.protocol import path_for_label

    rng = random.Random(seed)
    pool = _Pool(rng, language=language)
    if pool.chinese:
        yield from _chinese_turn_objects(rng, pool, turns, sentences_per_turn, reference_words, turns_per_dialogue)
        return
    paths = {label: path_for_label(label) for label in set(LABELS)}
    reference = topic = model = None
    for number in range(turns):
        turn_index = number % turns_per_dialogue
        if turn_index == 0:
            reference = pool.reference(rng, reference_words)
            topic, model = rng.choice(TOPICS), rng.choice(MODELS)
        dialogue_id = f"syn-{number // turns_per_dialogue:06d}"
        texts = pool.sentences(rng, sentences_per_turn)
        sentences, offset = [], 0
        for index, text in enumerate(texts):
            if index:
                offset += 1
            sentence = {"index": index, "start": offset, "end": offset + len(text), "text": text}
            if labelled:
                label = rng.choice(LABELS)
                sentence["gold"] = {"label": label, "path": paths[label], "provenance": "imported"}
            sentences.append(sentence)
            offset += len(text)
        yield {
            "dialogue": {"id": dialogue_id, "topic": topic, "language": "english", "generator_model": model,
                         "reference": reference, "metadata": {}},
            "turn": {"index": turn_index, "id": f"{dialogue_id}_{turn_index}",
                     "user_message": f"Tell me more about {rng.choice(SUBJECTS)}.",
                     "response": " ".join(texts), "history": [], "metadata": {}},
            "sentences": sentences,
        }


def _chinese_turn_objects(rng, pool, turns, sentences_per_turn, reference_words, turns_per_dialogue):
    reference = topic = model = None
    for number in range(turns):
        turn_index = number % turns_per_dialogue
        if turn_index == 0:
            reference = pool.reference(rng, reference_words)
            topic, model = rng.choice(TOPICS), rng.choice(MODELS)
        dialogue_id = f"zh-{number // turns_per_dialogue:06d}"
        yield {
            "dialogue": {"id": dialogue_id, "topic": topic, "language": "zh", "generator_model": model,
                         "reference": reference, "metadata": {}},
            "turn": {"index": turn_index, "id": f"{dialogue_id}_{turn_index}",
                     "user_message": f"请再介绍一下{rng.choice(ZH_SUBJECTS)}。",
                     "response": "".join(pool.sentences(rng, sentences_per_turn)), "history": [], "metadata": {}},
        }


def write_jsonl(path, **kwargs) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        for obj in iter_turn_objects(**kwargs):
            handle.write(json.dumps(obj, ensure_ascii=False))
            handle.write("\n")
    return path


def create_synthetic_project(slug, turns=24_000, sentences_per_turn=10, reference_words=700, labelled=True,
                             name=None, **kwargs):
    """Create (or fill) project ``slug`` with the synthetic corpus, in bulk; returns (project, summary)."""
    from django.db import transaction

    from annotator.corpus.imports.importers import ImportSummary
    from annotator.corpus.imports.importers.jsonl import record_from_object
    from annotator.models import Project
    from annotator.corpus.imports.services import records_import

    project, _ = Project.objects.get_or_create(slug=slug, defaults={"name": name or f"Synthetic {slug}"})
    summary = ImportSummary(files=["synthetic corpus"])
    objects = iter_turn_objects(turns=turns, sentences_per_turn=sentences_per_turn,
                                reference_words=reference_words, labelled=labelled, **kwargs)
    records = (record_from_object(obj, "synthetic", n, summary) for n, obj in enumerate(objects, start=1))
    with transaction.atomic():
        records_import(project, records, summary=summary)
    return project, summary


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("--turns", type=int, default=24_000)
    parser.add_argument("--sentences", type=int, default=10)
    parser.add_argument("--reference-words", type=int, default=700)
    parser.add_argument("--unlabelled", action="store_true")
    parser.add_argument("--language", default="en", choices=("en", "zh"))
    args = parser.parse_args()
    out = write_jsonl(args.out, turns=args.turns, sentences_per_turn=args.sentences,
                      reference_words=args.reference_words, labelled=not args.unlabelled, language=args.language)
    print(f"wrote {args.turns} turns to {out} ({out.stat().st_size / 1e6:.1f} MB)")
