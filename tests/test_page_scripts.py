"""The pages' scripts are ES modules: each imports what it uses, nothing is shared through window.* (issue #23).

A template loads a project script only as `<script type="module">` (the imports show the order; the templates no
longer carry it), and no project script hangs its exports on `window`.
"""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = ROOT / "static" / "js"
# Scripts every page loads as classic scripts (base.html: htmx's config, the connection banner and the missing-font
# notice) and the API docs page's initialiser; they define nothing another script uses.
CLASSIC = {"app.js", "declarative.js", "script_glyphs.js", "redoc-init.js", "promote_form.js"}


def test_the_annotation_adjudication_amend_and_protocol_pages_load_their_scripts_as_modules():
    loaded = {}
    for template in (ROOT / "templates").rglob("*.html"):
        for tag in re.findall(r"<script\b[^>]*\bsrc=\"\{% static 'js/([\w-]+\.js)' %\}\"[^>]*>", template.read_text()):
            loaded.setdefault(tag, []).append(template.name)
    text = {t.name: t.read_text() for t in (ROOT / "templates").rglob("*.html")}
    for name in ("annotate.html", "adjudicate.html", "feedback_inbox.html", "protocol.html"):
        tags = re.findall(r"<script\b[^>]*src=\"\{% static 'js/[\w-]+\.js' %\}\"[^>]*>", text[name])
        assert tags and all('type="module"' in tag for tag in tags), (name, tags)
    entry_points = {"annotation_page.js", "adjudication.js", "amend_walk.js", "protocol_preview.js",
                    "copy_link.js"}  # the People page's Copy buttons
    assert set(loaded) - CLASSIC <= entry_points, loaded
    assert all('type="module"' in tag for tag in re.findall(r"<script\b[^>]*copy_link\.js[^>]*>", text["people.html"]))


def test_no_project_script_shares_anything_through_window():
    for script in SCRIPTS.glob("*.js"):
        source = script.read_text()
        assert not re.search(r"\bwindow\.[A-Za-z_$][\w$]*\s*=[^=]", source), script.name
        if script.name not in CLASSIC:
            assert "(function () {" not in source, script.name  # a module, not a wrapped classic script


def test_every_relative_import_names_a_script_that_exists():
    for script in SCRIPTS.glob("*.js"):
        for target in re.findall(r"""(?:from|import)\s*["'](\./[\w-]+\.js)["']""", script.read_text()):
            assert (SCRIPTS / target).is_file(), (script.name, target)
