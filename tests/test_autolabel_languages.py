"""The pre-labeler in other languages: the prompt states the answer's language, the offline judge reads a Chinese
turn sentence by sentence, and the scores weigh a Chinese sentence by its characters."""

from autolabel.baseline import judge
from annotator.domain.protocol.document import default_protocol
from autolabel.evaluation.scores import Item, detection_scores, word_count
from autolabel.labelling.parsing import parse_reply
from autolabel.labelling.pipeline import JobConfig, TurnSpec, plan_requests
from autolabel.labelling.prompting import DEFAULT_STAGE1_TEMPLATE, DEFAULT_STAGE2_TEMPLATE, STAGE_1, STAGE_2

REFERENCE = "故宫位于北京，始建于明朝永乐四年，是世界上现存规模最大的木质结构古建筑群。"
UNITS = ["故宫始建于明朝永乐四年。", "它是世界上现存规模最大的木质结构古建筑群！", "我认为这是中国最美的地方？", "总之值得一游。"]


def _spec(language="Chinese"):
    return TurnSpec(job_turn_id=1, turn_id=10, reference=REFERENCE, question="介绍一下故宫。",
                    sentences=[(n, 100 + n, text) for n, text in enumerate(UNITS, start=1)], language=language)


def _user_prompt(spec):
    config = JobConfig(5, 3, True, DEFAULT_STAGE1_TEMPLATE, DEFAULT_STAGE2_TEMPLATE, [])
    (_, _, messages), = plan_requests(spec, config, STAGE_1)
    return messages[1]["content"]


def test_the_prompt_states_the_language_and_asks_for_the_protocols_tags():
    user = _user_prompt(_spec())
    assert "The answer is written in Chinese." in user
    assert "write the tags exactly as listed below" in user
    # The tags are the protocol's answer values (the built-in document's here), listed with where they end.
    assert "relevant factual faithful → faithful\n" in user
    # Each sentence sits in its marker with nothing around it: no spaces are needed to find it.
    assert "<s1>故宫始建于明朝永乐四年。</s1>" in user and "<s4>总之值得一游。</s4>" in user
    assert "written in" not in _user_prompt(_spec(language=""))


def test_the_offline_judge_parses_every_sentence_of_a_chinese_turn():
    reply = judge.answer(_user_prompt(_spec()), seed=1)
    parsed = parse_reply(reply, STAGE_1, [1, 2, 3, 4])
    assert sorted(parsed.tags) == [1, 2, 3, 4]
    assert not parsed.problems
    # Read as character pairs, the two sentences the reference supports are faithful; the opinions go on to
    # the second request, which finds them unsupported.
    assert (parsed.tags[1].label, parsed.tags[2].label) == ("faithful", "faithful")
    assert (parsed.tags[3].entry, parsed.tags[4].entry) == ("rational", "rational")
    existing = {(STAGE_1, 0): {"votes": {str(n): tag.text for n, tag in parsed.tags.items()}}}
    config = JobConfig(1, 1, True, DEFAULT_STAGE1_TEMPLATE, DEFAULT_STAGE2_TEMPLATE, [])
    (_, numbers, messages), = plan_requests(TurnSpec(1, 10, REFERENCE, "", _spec().sentences, existing), config, STAGE_2)
    second = parse_reply(judge.answer(messages[1]["content"], seed=1), STAGE_2, numbers)
    assert numbers == [3, 4] and not second.problems
    assert {second.tags[3].label, second.tags[4].label} <= {"misleading", "speculative"}


def test_scores_weigh_a_chinese_sentence_by_its_characters():
    hallucinated = [{"label": "speculative", "hallucinated": True, "kind": "cognitive"}] * 5
    faithful = [{"label": "faithful", "hallucinated": False, "kind": "factual"}] * 5
    items = [Item(word_count(UNITS[0]), "faithful", hallucinated),   # 11 characters wrongly flagged
             Item(word_count(UNITS[2]), "speculative", hallucinated),  # 12 characters rightly flagged
             Item(word_count(UNITS[3]), "speculative", faithful)]      # 6 characters missed
    pooled = detection_scores(default_protocol(), items, threshold=3)["any_hallucination"]
    assert (pooled["gold_words"], pooled["predicted_words"], pooled["correct_words"]) == (18, 23, 12)
