"""Which new username may pass for another: the sign-up's rules against impersonation (no database here).

Two rules, the same on every database (SQLite's case-insensitive comparison knows only ASCII, so ``Émile``
beside ``émile`` passed there):

- **One script.** A username's letters come from one script (Latin, Cyrillic, Greek…; Chinese, Japanese and
  Korean writing, which mix by nature, count as one): ``аdmin`` with a Cyrillic ``а`` is refused, whatever
  accounts exist.
- **No twin.** Two usernames are twins when they read the same once normalised (NFKC: full-width letters,
  ligatures), case-folded (``ß`` is ``ss``) and with the Cyrillic and Greek letters that look like Latin ones
  read as those (``раура`` in Cyrillic looks like ``paypal``'s first letters); a new username may not be a
  twin of an existing one.
"""

from __future__ import annotations

import unicodedata

# Cyrillic and Greek letters drawn like a Latin letter (Unicode's confusables, the common ones). Upper and lower
# case separately: Greek capital eta looks like H, its small letter like n.
LOOKALIKES = str.maketrans({
    # Cyrillic
    "А": "a", "а": "a", "В": "b", "С": "c", "с": "c", "ԁ": "d", "Е": "e", "е": "e", "Н": "h", "һ": "h",
    "І": "i", "і": "i", "Ј": "j", "ј": "j", "К": "k", "ӏ": "l", "М": "m", "О": "o", "о": "o", "Р": "p",
    "р": "p", "ԛ": "q", "Ѕ": "s", "ѕ": "s", "Т": "t", "ѵ": "v", "ԝ": "w", "Х": "x", "х": "x", "У": "y",
    "у": "y", "Ү": "y", "ү": "y",
    # Greek
    "Α": "a", "Β": "b", "Ε": "e", "Η": "h", "Ι": "i", "ι": "i", "Κ": "k", "κ": "k", "Μ": "m", "Ν": "n",
    "η": "n", "ν": "v", "Ο": "o", "ο": "o", "Ρ": "p", "ρ": "p", "Τ": "t", "τ": "t", "υ": "u", "Υ": "y",
    "γ": "y", "Χ": "x", "χ": "x", "Ζ": "z",
    # Latin letters drawn like another Latin letter
    "ı": "i",
})

# Scripts that one name mixes by nature: Han characters with kana (Japanese) or Hangul (Korean).
EAST_ASIAN = {"CJK", "HIRAGANA", "KATAKANA", "HANGUL", "IDEOGRAPHIC"}
# Letters of no script of their own (ʼ MODIFIER LETTER APOSTROPHE in O'Brien): they go with any.
NO_SCRIPT = {"MODIFIER", ""}

MIXED_SCRIPTS = ("A username takes letters of one alphabet only (not Latin with Cyrillic or Greek, for "
                 "example), so that it cannot pass for someone else's: choose another.")
TAKEN = "A user with that username already exists."
LOOKS_TAKEN = ("This username is too much like an existing username (letters that look the same): "
               "choose another.")


def script_of(letter: str) -> str:
    """The script of a letter, from its Unicode name ("CYRILLIC SMALL LETTER A" → CYRILLIC)."""
    script = unicodedata.name(letter, "").split(" ", 1)[0]
    return "CJK" if script in EAST_ASIAN else script


def scripts_of(username: str) -> set[str]:
    letters = (character for character in username if unicodedata.category(character).startswith("L"))
    return {script_of(letter) for letter in letters} - NO_SCRIPT


def plain(username: str) -> str:
    """The username as compared for case: normalised, case-folded."""
    return unicodedata.normalize("NFKC", username).casefold()


def skeleton(username: str) -> str:
    """What the username looks like: normalised, lookalike letters read as the Latin ones, case-folded."""
    return unicodedata.normalize("NFKC", username).translate(LOOKALIKES).casefold()


def username_refusal(username: str, existing) -> str:
    """Why ``username`` may not be made beside the ``existing`` usernames (any iterable), or "" when it may."""
    if len(scripts_of(unicodedata.normalize("NFKC", username))) > 1:
        return MIXED_SCRIPTS
    as_plain, looks = plain(username), skeleton(username)
    refusal = ""
    for other in existing:
        if plain(other) == as_plain:
            return TAKEN
        if skeleton(other) == looks:
            refusal = LOOKS_TAKEN
    return refusal
