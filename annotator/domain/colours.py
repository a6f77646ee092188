"""Colours a protocol document gives its labels, made readable: the text colour for a chip of each."""


def _luminance(colour: str) -> float:
    """WCAG 2 relative luminance of a #rgb or #rrggbb colour."""
    digits = colour.lstrip("#")
    if len(digits) == 3:
        digits = "".join(d * 2 for d in digits)
    channels = [int(digits[i:i + 2], 16) / 255 for i in (0, 2, 4)]
    linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def readable_text_colour(background: str) -> str:
    """White or near-black, whichever contrasts more with ``background``: a protocol document chooses its
    labels' colours, and a chip must stay readable (WCAG AA asks 4.5:1) whatever it chose."""
    lum = _luminance(background)
    dark = "#111111"
    on_white = 1.05 / (lum + 0.05)
    on_dark = (lum + 0.05) / (_luminance(dark) + 0.05)
    return "#ffffff" if on_white >= on_dark else dark
