"""A protocol document chooses its labels' colours; chips stay readable whatever it chose (WCAG AA: 4.5:1)."""

import pytest

from annotator.domain.colours import _luminance, readable_text_colour
from annotator.domain.protocol.document import COGNIBENCH, load_shipped, shipped_names


def contrast(a, b):
    light, dark = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


@pytest.mark.parametrize("background, text", [("#ffffff", "#111111"), ("#000000", "#ffffff"),
                                              ("#ef6c00", "#111111"), ("#1565c0", "#ffffff"), ("#fff", "#111111")])
def test_the_text_colour_is_the_one_that_contrasts_more(background, text):
    assert readable_text_colour(background) == text


@pytest.mark.parametrize("name", shipped_names())
def test_every_shipped_label_chip_reaches_aa_contrast(name):
    protocol = load_shipped(name)
    for label in protocol.describe()["labels"]:
        assert contrast(label["colour"], label["text_colour"]) >= 4.5, (name, label["value"])


def test_the_page_styles_give_each_chip_its_readable_text_colour():
    from annotator.templatetags.gold_tags import label_styles

    styles = label_styles(COGNIBENCH)
    assert ".chip-speculative{background:#ef6c00;color:#111111}" in styles
