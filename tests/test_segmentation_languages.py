"""Units by language: the dialogue's language chooses the segmenter (docs/languages.md lists these cases)."""

import pytest

from annotator.domain.languages import LanguageError, language_code, text_direction, word_count
from annotator.domain.segmentation import segmenter_for, split_sentences

# (language, text, expected units): the table of docs/languages.md.
CASES = [
    ("zh", "故宫始建于明朝永乐四年。它是世界上现存规模最大的木质结构古建筑群！我认为这是中国最美的地方？总之值得一游。",
     ["故宫始建于明朝永乐四年。", "它是世界上现存规模最大的木质结构古建筑群！", "我认为这是中国最美的地方？", "总之值得一游。"]),
    ("zh", "他说：「今天天气很好。」然后就走了。她问：“你去吗？”我没回答。",
     ["他说：「今天天气很好。」", "然后就走了。", "她问：“你去吗？”", "我没回答。"]),
    ("zh", "他说：『好的。』我们出发了。", ["他说：『好的。』", "我们出发了。"]),
    ("zh", "“我不知道。”他说。", ["“我不知道。”", "他说。"]),
    ("zh", "这是真的吗？！太好了……我们走吧。", ["这是真的吗？！", "太好了……", "我们走吧。"]),
    ("zh", "他沉默了……", ["他沉默了……"]),
    ("zh", "第一句｡第二句．第三句！！第四句?!第五句。", ["第一句｡", "第二句．", "第三句！！", "第四句?!", "第五句。"]),
    ("zh", "今天很好.明天也好.后天呢?", ["今天很好.", "明天也好.", "后天呢?"]),
    ("zh", "价格是3.5元。圆周率约为３．１４。GDP增长了6.1%。", ["价格是3.5元。", "圆周率约为３．１４。", "GDP增长了6.1%。"]),
    ("zh", "他用iPhone 15 Pro拍照。Mr. Smith来了。我们在 2023 年访问了 U.S. 和 U.K. 两个国家。",
     ["他用iPhone 15 Pro拍照。", "Mr. Smith来了。", "我们在 2023 年访问了 U.S. 和 U.K. 两个国家。"]),
    ("zh", "第一句话。\n\n第二句话。", ["第一句话。", "第二句话。"]),
    ("ja", "東京は日本の首都です。人口は約1400万人です！本当ですか？",
     ["東京は日本の首都です。", "人口は約1400万人です！", "本当ですか？"]),
    ("ja", "彼は「もう帰る。」と言った。私は『はい。』と答えた。", ["彼は「もう帰る。」と言った。", "私は『はい。』と答えた。"]),
    ("de", "Dr. Müller kam um 9 Uhr. Er wohnt in der Str. 5, z.B. in Berlin. Das ist ca. 3 km entfernt. Am 3. Oktober feiern wir.",
     ["Dr. Müller kam um 9 Uhr.", "Er wohnt in der Str. 5, z.B. in Berlin.", "Das ist ca. 3 km entfernt.", "Am 3. Oktober feiern wir."]),
    ("de", "Das ist z. B. ein Test. Prof. Dr. Schmidt sprach.", ["Das ist z. B. ein Test.", "Prof. Dr. Schmidt sprach."]),
    ("fr", "M. Dupont est arrivé. Mme Martin l'a vu, p. ex. hier. C'était en 300 av. J.-C. Fin.",
     ["M. Dupont est arrivé.", "Mme Martin l'a vu, p. ex. hier.", "C'était en 300 av. J.-C.", "Fin."]),
    ("es", "¿Cómo estás? ¡Muy bien! El Sr. García llegó. Vive en EE.UU. desde 2010.",
     ["¿Cómo estás?", "¡Muy bien!", "El Sr. García llegó.", "Vive en EE.UU. desde 2010."]),
    ("ar", "ذهبت إلى السوق. هل اشتريت الخبز؟ نعم، اشتريته! كان الجو جميلاً.",
     ["ذهبت إلى السوق.", "هل اشتريت الخبز؟", "نعم، اشتريته!", "كان الجو جميلاً."]),
    ("ar", "ما اسمك؟ اسمي أحمد؛ أنا من مصر. قال: «مرحباً.» ثم ذهب.",
     ["ما اسمك؟", "اسمي أحمد؛ أنا من مصر.", "قال: «مرحباً.»", "ثم ذهب."]),
    ("he", "שלום עולם. מה שלומך? הוא אמר: \"שלום.\" ואז הלך.", ["שלום עולם.", "מה שלומך?", "הוא אמר: \"שלום.\"", "ואז הלך."]),
    ("hi", "भारत एक विशाल देश है। यहाँ कई भाषाएँ बोली जाती हैं। क्या आप हिंदी बोलते हैं? हाँ!",
     ["भारत एक विशाल देश है।", "यहाँ कई भाषाएँ बोली जाती हैं।", "क्या आप हिंदी बोलते हैं?", "हाँ!"]),
    ("hi", "यह दूसरा है॥ तीसरा?", ["यह दूसरा है॥", "तीसरा?"]),
    ("en", "Dr. Smith visited the U.S. in May. The trip was long!", ["Dr. Smith visited the U.S. in May.", "The trip was long!"]),
    # Issue 41: an end mark before a number, an ellipsis that ends a complete clause, a zero-width space after a
    # full stop, month abbreviations before a number, a lower-case word after an abbreviation, Korean unspaced.
    ("zh", "会议推迟了！2024年再议。", ["会议推迟了！", "2024年再议。"]),
    ("zh", "我们出发了。3点到达。", ["我们出发了。", "3点到达。"]),
    ("zh", "是吗？5月见。", ["是吗？", "5月见。"]),
    ("zh", "他说：“明天见。”3点出发。", ["他说：“明天见。”", "3点出发。"]),
    ("ja", "会議は延期された！2024年に再検討する。", ["会議は延期された！", "2024年に再検討する。"]),
    ("zh", "雨停了……街上的人渐渐多了。", ["雨停了……", "街上的人渐渐多了。"]),
    ("ja", "雨が止んだ……街に人が増えた。", ["雨が止んだ……", "街に人が増えた。"]),
    ("zh", "他说……我不知道。", ["他说……我不知道。"]),
    ("zh", "我觉得……还行吧。", ["我觉得……还行吧。"]),
    ("en", "It rained.\u200bThen it stopped.", ["It rained.", "Then it stopped."]),
    ("zh", "下雨了。\u200b我们走吧。", ["下雨了。", "我们走吧。"]),
    ("fr", "Il est arrivé le 3 févr. 2024 à Paris. Puis il est parti.", ["Il est arrivé le 3 févr. 2024 à Paris.", "Puis il est parti."]),
    ("fr", "Nous sommes le 1er janv. 2024. Il fait froid.", ["Nous sommes le 1er janv. 2024.", "Il fait froid."]),
    ("fr", "Le 5 janv. nous partons.", ["Le 5 janv. nous partons."]),
    ("ru", "Он пришёл, т.е. опоздал. Потом ушёл.", ["Он пришёл, т.е. опоздал.", "Потом ушёл."]),
    ("ko", "서울은 한국의 수도입니다.부산은 항구 도시입니다.", ["서울은 한국의 수도입니다.", "부산은 항구 도시입니다."]),
    ("ko", "회의가 연기됐다! 2024년에 다시 논의한다. 정말요?", ["회의가 연기됐다!", "2024년에 다시 논의한다.", "정말요?"]),
]


@pytest.mark.parametrize("language, text, expected", CASES, ids=[f"{c[0]}-{n}" for n, c in enumerate(CASES)])
def test_units_per_language(language, text, expected):
    spans = split_sentences(text, language)
    assert [span.text for span in spans] == expected
    for span in spans:
        assert text[span.start:span.end] == span.text  # Python string offsets


def test_the_chinese_example_gives_four_units_not_one_as_english_punkt_did():
    text = CASES[0][1]
    assert len(split_sentences(text, language_code("chinese"))) == 4
    assert len(split_sentences(text, "en")) == 1  # why the language must choose


def test_offsets_count_characters_beyond_the_basic_plane():
    text = "𠀀𠀁是一个字。第二句。"  # CJK extension B: two UTF-16 units each, one Python character
    assert [(s.start, s.end) for s in split_sentences(text, "zh")] == [(0, 7), (7, 11)]


def test_a_long_line_without_punctuation_is_one_unit_at_once():
    # The importer refuses a unit over IMPORT_MAX_SENTENCE_CHARS; the segmenter itself must not stall.
    for language in ("zh", "en", "th"):
        spans = split_sentences("字" * 50_000, language)
        assert [(s.start, s.end) for s in spans] == [(0, 50_000)]


@pytest.mark.parametrize("value, code", [
    ("english", "en"), ("English", "en"), ("en", "en"), ("EN", "en"), ("", "en"), ("chinese", "zh"), ("zh", "zh"),
    ("zh-Hans", "zh"), ("zh_CN", "zh"), ("mandarin", "zh"), ("Japanese", "ja"), ("ar", "ar"), ("hebrew", "he"),
    ("iw", "he"), ("pt-BR", "pt"), ("  french ", "fr"),
])
def test_language_names_and_codes(value, code):
    assert language_code(value) == code


@pytest.mark.parametrize("value", ["klingon", "xx", "e", "en-", "zz-Hans", "english!"])
def test_an_unknown_language_is_refused_with_what_is_accepted(value):
    with pytest.raises(LanguageError, match="ISO 639-1"):
        language_code(value)


def test_segmenter_names():
    assert segmenter_for("en") == "NLTK Punkt (English)"
    assert segmenter_for("zh") == "sentencex (Chinese, zh)"


def test_direction():
    assert text_direction("ar") == text_direction("he") == "rtl"
    assert text_direction("zh") == text_direction("en") == "auto"


@pytest.mark.parametrize("text, words", [
    ("The trip was long.", 4),                           # spaced: whitespace words, as len(text.split())
    ("  Dr.  Smith\nleft ", 3),
    ("Он был здесь.", 3),                                # Cyrillic
    ("ذهبت إلى السوق.", 3),                             # Arabic
    ("भारत एक विशाल देश है।", 5),                        # Devanagari
    ("서울은 한국의 수도입니다.", 3),                      # Korean is spaced
    ("故宫始建于明朝永乐四年。", 11),                       # Chinese: one per character, punctuation aside
    ("東京は日本の首都です。", 10),                         # Japanese kanji and kana
    ("他用iPhone 15拍照。", 6),                          # 4 characters + 2 spaced words
    ("", 0),
])
def test_word_count_per_script(text, words):
    assert word_count(text) == words


def test_a_lead_can_split_a_chinese_unit_between_two_characters():
    from annotator.domain.units import Unit, split_unit

    response = "故宫始建于明朝永乐四年。它是世界上现存规模最大的木质结构古建筑群！"
    units = [Unit(0, 0, len(response), response)]  # one unit, as English Punkt cut it
    after = split_unit(units, response, 0, response.index("它"))
    assert [unit.text for unit in after] == ["故宫始建于明朝永乐四年。", "它是世界上现存规模最大的木质结构古建筑群！"]
    # Spaced text still snaps to the nearest whitespace: no word is cut in two.
    english = "The red car left."
    assert [u.text for u in split_unit([Unit(0, 0, len(english), english)], english, 0, 5)] == ["The", "red car left."]
