"""Languages: what a dialogue's ``language`` may say, and what follows from it.

A dialogue's ``language`` chooses how its response is cut into units (``segmentation``) and which
direction its text reads in on the screens. It may be:

* an ISO 639-1 code (``zh``, ``ar``), in any case, optionally with a region or script subtag
  (``zh-Hans``, ``pt_BR``: the subtag is ignored);
* the English name of the language, in any case (``english``, as CogniBench writes it; ``Chinese``);
  a few other names the sources use are listed in ``ALIASES`` (``mandarin``);
* empty: the project's default language, or English when the project has none.

Anything else is refused at import, naming the record (``LanguageError``).

Word counts (evaluation weights, reports) do not depend on the language but on the script of the
text itself (``word_count``): a response in "english" that quotes Chinese counts the Chinese as
Chinese.
"""

from __future__ import annotations

import re
from functools import lru_cache

# ISO 639-1: every two-letter code, with the language's English name (the first, where ISO gives several).
ISO_639_1 = {
    "aa": "Afar", "ab": "Abkhazian", "ae": "Avestan", "af": "Afrikaans", "ak": "Akan", "am": "Amharic",
    "an": "Aragonese", "ar": "Arabic", "as": "Assamese", "av": "Avaric", "ay": "Aymara", "az": "Azerbaijani",
    "ba": "Bashkir", "be": "Belarusian", "bg": "Bulgarian", "bi": "Bislama", "bm": "Bambara", "bn": "Bengali",
    "bo": "Tibetan", "br": "Breton", "bs": "Bosnian", "ca": "Catalan", "ce": "Chechen", "ch": "Chamorro",
    "co": "Corsican", "cr": "Cree", "cs": "Czech", "cu": "Church Slavic", "cv": "Chuvash", "cy": "Welsh",
    "da": "Danish", "de": "German", "dv": "Divehi", "dz": "Dzongkha", "ee": "Ewe", "el": "Greek",
    "en": "English", "eo": "Esperanto", "es": "Spanish", "et": "Estonian", "eu": "Basque", "fa": "Persian",
    "ff": "Fulah", "fi": "Finnish", "fj": "Fijian", "fo": "Faroese", "fr": "French", "fy": "Western Frisian",
    "ga": "Irish", "gd": "Gaelic", "gl": "Galician", "gn": "Guarani", "gu": "Gujarati", "gv": "Manx",
    "ha": "Hausa", "he": "Hebrew", "hi": "Hindi", "ho": "Hiri Motu", "hr": "Croatian", "ht": "Haitian",
    "hu": "Hungarian", "hy": "Armenian", "hz": "Herero", "ia": "Interlingua", "id": "Indonesian",
    "ie": "Interlingue", "ig": "Igbo", "ii": "Sichuan Yi", "ik": "Inupiaq", "io": "Ido", "is": "Icelandic",
    "it": "Italian", "iu": "Inuktitut", "ja": "Japanese", "jv": "Javanese", "ka": "Georgian", "kg": "Kongo",
    "ki": "Kikuyu", "kj": "Kuanyama", "kk": "Kazakh", "kl": "Kalaallisut", "km": "Khmer", "kn": "Kannada",
    "ko": "Korean", "kr": "Kanuri", "ks": "Kashmiri", "ku": "Kurdish", "kv": "Komi", "kw": "Cornish",
    "ky": "Kirghiz", "la": "Latin", "lb": "Luxembourgish", "lg": "Ganda", "li": "Limburgan", "ln": "Lingala",
    "lo": "Lao", "lt": "Lithuanian", "lu": "Luba-Katanga", "lv": "Latvian", "mg": "Malagasy",
    "mh": "Marshallese", "mi": "Maori", "mk": "Macedonian", "ml": "Malayalam", "mn": "Mongolian",
    "mr": "Marathi", "ms": "Malay", "mt": "Maltese", "my": "Burmese", "na": "Nauru", "nb": "Norwegian Bokmål",
    "nd": "North Ndebele", "ne": "Nepali", "ng": "Ndonga", "nl": "Dutch", "nn": "Norwegian Nynorsk",
    "no": "Norwegian", "nr": "South Ndebele", "nv": "Navajo", "ny": "Chichewa", "oc": "Occitan",
    "oj": "Ojibwa", "om": "Oromo", "or": "Oriya", "os": "Ossetian", "pa": "Punjabi", "pi": "Pali",
    "pl": "Polish", "ps": "Pashto", "pt": "Portuguese", "qu": "Quechua", "rm": "Romansh", "rn": "Rundi",
    "ro": "Romanian", "ru": "Russian", "rw": "Kinyarwanda", "sa": "Sanskrit", "sc": "Sardinian",
    "sd": "Sindhi", "se": "Northern Sami", "sg": "Sango", "si": "Sinhala", "sk": "Slovak", "sl": "Slovenian",
    "sm": "Samoan", "sn": "Shona", "so": "Somali", "sq": "Albanian", "sr": "Serbian", "ss": "Swati",
    "st": "Southern Sotho", "su": "Sundanese", "sv": "Swedish", "sw": "Swahili", "ta": "Tamil",
    "te": "Telugu", "tg": "Tajik", "th": "Thai", "ti": "Tigrinya", "tk": "Turkmen", "tl": "Tagalog",
    "tn": "Tswana", "to": "Tonga", "tr": "Turkish", "ts": "Tsonga", "tt": "Tatar", "tw": "Twi",
    "ty": "Tahitian", "ug": "Uighur", "uk": "Ukrainian", "ur": "Urdu", "uz": "Uzbek", "ve": "Venda",
    "vi": "Vietnamese", "vo": "Volapük", "wa": "Walloon", "wo": "Wolof", "xh": "Xhosa", "yi": "Yiddish",
    "yo": "Yoruba", "za": "Zhuang", "zh": "Chinese", "zu": "Zulu",
}
# Other names the sources use for a language.
ALIASES = {
    "mandarin": "zh", "cantonese": "zh", "simplified chinese": "zh", "traditional chinese": "zh",
    "farsi": "fa", "filipino": "tl", "iw": "he", "ji": "yi", "in": "id",
}
# Written right to left (the screens set dir="rtl"; other languages get dir="auto").
RIGHT_TO_LEFT = frozenset({"ar", "he", "fa", "ur", "yi", "ps", "sd", "ug", "dv", "ks"})
DEFAULT_LANGUAGE = "en"

_NAMES = {name.lower(): code for code, name in ISO_639_1.items()}
_WITH_SUBTAG = re.compile(r"([a-z]{2})[-_][a-z0-9]+(?:[-_][a-z0-9]+)*")


class LanguageError(ValueError):
    """A language the studio does not know; the message says what is accepted."""


@lru_cache(maxsize=512)
def language_code(value: str, default: str = DEFAULT_LANGUAGE) -> str:
    """The ISO 639-1 code ``value`` stands for (``default`` when empty); raises LanguageError."""
    cleaned = " ".join(value.split()).lower()
    if not cleaned:
        return default
    if cleaned in ISO_639_1:
        return cleaned
    if cleaned in _NAMES:
        return _NAMES[cleaned]
    if cleaned in ALIASES:
        return ALIASES[cleaned]
    tagged = _WITH_SUBTAG.fullmatch(cleaned)
    if tagged and (tagged.group(1) in ISO_639_1 or tagged.group(1) in ALIASES):
        return ALIASES.get(tagged.group(1), tagged.group(1))
    raise LanguageError(
        f"unknown language {value[:60]!r}: give an ISO 639-1 code (en, zh, ar ...), optionally with a region "
        "(zh-Hans), or the English name of the language (english, chinese ...)"
    )


def text_language(value: str, default: str = "") -> str:
    """The code of a stored ``language`` (``default``, then English, when empty); "" when it is unknown.

    For the screens, which show what was imported whatever it says; imports refuse unknown languages.
    """
    try:
        return language_code(value or "", language_code(default or ""))
    except LanguageError:
        return ""


def text_attributes(code: str) -> dict[str, str]:
    """The ``lang`` and ``dir`` attributes of a text in language ``code`` ("" when unknown: dir only)."""
    return {"lang": code, "dir": text_direction(code)} if code else {"dir": "auto"}


def language_name(code: str) -> str:
    return ISO_639_1.get(code, code)


def text_direction(code: str) -> str:
    """The ``dir`` of a text in this language: "rtl" for right-to-left languages, else "auto"."""
    return "rtl" if code in RIGHT_TO_LEFT else "auto"


# Scripts written without spaces between words: Han (Chinese characters, Japanese kanji), Japanese kana,
# and their punctuation-free marks. Each such character counts as one word, and evidence snaps to it alone.
UNSPACED_RANGES = (
    (0x3005, 0x3007),    # 々 〆 〇
    (0x3040, 0x309F),    # Hiragana
    (0x30A0, 0x30FF),    # Katakana
    (0x31F0, 0x31FF),    # Katakana phonetic extensions
    (0x3400, 0x4DBF),    # CJK unified ideographs, extension A
    (0x4E00, 0x9FFF),    # CJK unified ideographs
    (0xF900, 0xFAFF),    # CJK compatibility ideographs
    (0xFF66, 0xFF9F),    # half-width Katakana
    (0x20000, 0x2FA1F),  # CJK extensions B to F and compatibility supplement
    (0x30000, 0x323AF),  # CJK extensions G and H
)
_UNSPACED_CLASS = "".join(f"{chr(low)}-{chr(high)}" for low, high in UNSPACED_RANGES)
_UNSPACED = re.compile(f"[{_UNSPACED_CLASS}]")
_UNSPACED_RUN = re.compile(f"[{_UNSPACED_CLASS}]+")
# Punctuation of text written without spaces (。、「」！？ full-width forms, curly quotes, …): not words.
_WIDE_PUNCTUATION = re.compile("[\u2018-\u201f\u2026\u2014\u3000-\u3004\u3008-\u303f"
                               "\uff01-\uff0f\uff1a-\uff20\uff3b-\uff40\uff5b-\uff65]")


def is_unspaced(character: str) -> bool:
    return bool(_UNSPACED.match(character))


def word_count(text: str) -> int:
    """The words of ``text``, the one count of evaluation weights and reports (rates by words).

    Whitespace-separated words in spaced scripts (Latin, Cyrillic, Arabic, Hebrew, Devanagari, Korean
    Hangul ...); one word per character in scripts written without spaces (Chinese, Japanese:
    ``UNSPACED_RANGES``), so a Chinese sentence weighs by its length as an English one does. Mixed text
    counts each part by its own rule: "他用iPhone 15拍照。" is 4 characters + 2 words = 6 (the wide
    punctuation of such text, 。「」！ ..., counts as nothing). For text with no Chinese or Japanese
    character this is ``len(text.split())``, the count used before languages were known.
    """
    if not _UNSPACED.search(text):
        return len(text.split())
    characters = 0

    def gap(match):
        nonlocal characters
        characters += match.end() - match.start()
        return " "

    spaced = _WIDE_PUNCTUATION.sub(" ", _UNSPACED_RUN.sub(gap, text))
    return characters + len(spaced.split())
