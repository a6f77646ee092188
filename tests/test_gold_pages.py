"""Adjudication, gold and reports pages through the test client: who sees what, and what they see."""

import csv
import io
import re
import json

import pytest
from django.test import Client

from annotator.models import Adjudication, Assignment, GoldEvent, GoldLabel, ImportBatch
from annotator.gold.derivation import gold_derive_for_turn
from annotator.domain.vocabulary import GoldProvenance, Label, ProtocolMode, Role

from .factories import DialogueFactory, ProjectFactory, TurnFactory, member
from .factories_gold import annotators, submit

pytestmark = pytest.mark.django_db

F, I, S, R, X = Label.FAITHFUL, Label.INVENTED, Label.SPECULATIVE, Label.RELIABLE, Label.IRRELEVANT


@pytest.fixture
def setup():
    project = ProjectFactory(slug="amazon")
    ann1, ann2 = annotators(project)
    batch = ImportBatch.objects.create(project=project, kind=ImportBatch.Kind.JSONL, filename="=cmd|evil.jsonl")
    turn = TurnFactory(dialogue=DialogueFactory(project=project, batch=batch, generator_model="gpt-x"))
    a1 = submit(turn, ann1, [F, S, X])
    a2 = submit(turn, ann2, [I, S, X])
    gold_derive_for_turn(turn)
    return {
        "project": project, "turn": turn, "ann1": ann1, "a1": a1, "a2": a2,
        "lead": member(project, Role.LEAD), "judge": member(project, Role.ADJUDICATOR),
        "adjudication": Adjudication.objects.get(), "sentences": list(turn.sentences.order_by("index")),
    }


def client_for(user):
    client = Client()
    client.force_login(user)
    return client


def urls(s):
    slug, adj = s["project"].slug, s["adjudication"].pk
    return [
        ("get", f"/p/{slug}/adjudication/"),
        ("get", f"/p/{slug}/adjudication/turn/{s['turn'].pk}/"),
        ("post", f"/p/{slug}/adjudication/{adj}/resolve/"),
        ("get", f"/p/{slug}/gold/sentence/{s['sentences'][0].pk}/"),
        ("post", f"/p/{slug}/gold/sentence/{s['sentences'][0].pk}/"),
        ("post", f"/p/{slug}/gold/assignment/{s['a1'].pk}/reopen/"),
        ("get", f"/p/{slug}/reports/"),
        ("get", f"/p/{slug}/reports/agreement.csv"),
    ]


def test_annotators_and_outsiders_get_404_everywhere(setup):
    outsider = member(ProjectFactory(), Role.LEAD)
    for user in (setup["ann1"], outsider):
        client = client_for(user)
        for method, url in urls(setup):
            assert getattr(client, method)(url).status_code == 404, (user, url)
    assert not GoldLabel.objects.filter(sentence=setup["sentences"][0]).exists()


def test_adjudicators_do_not_see_reports_or_lead_actions(setup):
    client = client_for(setup["judge"])
    slug = setup["project"].slug
    assert client.get(f"/p/{slug}/reports/").status_code == 404
    assert client.post(f"/p/{slug}/gold/assignment/{setup['a1'].pk}/reopen/", {"reason": "x"}).status_code == 404
    page = client.get(f"/p/{slug}/gold/sentence/{setup['sentences'][0].pk}/").content.decode()
    assert "Override gold" not in page and "Reopen" not in page
    assert client.post(f"/p/{slug}/gold/sentence/{setup['sentences'][0].pk}/", {"label": F, "reason": "x"}).status_code == 404


def test_queue_lists_turns_with_open_disputes(setup):
    page = client_for(setup["judge"]).get(f"/p/{setup['project'].slug}/adjudication/").content.decode()
    # An adjudicator reads the turn's neutral name, never the source's record id (issue 22 item 2).
    assert f"Turn {setup['turn'].pk}" in page and "Adjudicate" in page
    assert setup["turn"].dialogue.external_id not in page
    # An annotator of the turn who is also a lead elsewhere in the project cannot take it.
    Assignment.objects.filter(pk=setup["a1"].pk).update(annotator=setup["lead"])
    page = client_for(setup["lead"]).get(f"/p/{setup['project'].slug}/adjudication/").content.decode()
    assert "hidden because you annotated it" in page
    response = client_for(setup["lead"]).get(f"/p/{setup['project'].slug}/adjudication/turn/{setup['turn'].pk}/")
    assert response.status_code == 403


def test_adjudication_screen_shows_paths_divergence_and_no_names_to_adjudicators(setup):
    page = client_for(setup["judge"]).get(f"/p/{setup['project'].slug}/adjudication/turn/{setup['turn'].pk}/")
    html = page.content.decode()
    assert 'data-diverged="faithfulness"' in html
    assert "Annotator A" in html and setup["ann1"].username not in html
    assert "The Amazon river flows through Brazil." in html  # the reference
    lead_html = client_for(setup["lead"]).get(f"/p/{setup['project'].slug}/adjudication/turn/{setup['turn'].pk}/").content.decode()
    assert f"Annotator A ({setup['ann1'].username})" in lead_html


def test_a_label_picked_directly_shows_no_path_nobody_walked(setup):
    """Independent mode: annotator B picked "invented" with one key; the dispute shows B's label, no path for B,
    and no step where the two "diverged"."""
    from annotator.models import AnnotationEvent

    first = setup["sentences"][0]
    AnnotationEvent.objects.create(assignment=setup["a1"], sentence=first, action="answer", new={"label": ""})
    AnnotationEvent.objects.create(assignment=setup["a2"], sentence=first, action="pick", new={"label": I})
    html = client_for(setup["judge"]).get(f"/p/{setup['project'].slug}/adjudication/turn/{setup['turn'].pk}/").content.decode()
    card = html.split(f'id="dispute-{setup["adjudication"].pk}"')[1].split("</section>")[0]
    assert card.count("data-picked") == 1 and "picked the label directly" in card
    assert "diverged here" not in card and "data-diverged" not in card
    assert "Invented" in card and "Faithful" in card  # both labels, as chosen
    rows = card.split("<tbody>")[1].split("final-row")[0]
    assert "Invented" not in rows  # B's answers are not on the path rows: nobody walked them


def test_resolving_with_the_walk_the_page_sends(setup):
    """The adjudicator's walk is walked in the page and sent whole with the decision: the form checks it."""
    client = client_for(setup["judge"])
    url = f"/p/{setup['project'].slug}/adjudication/{setup['adjudication'].pk}/resolve/"
    walked = {"relevance": "relevant", "kind": "factual", "faithfulness": "invented"}
    for path, problem in ((None, "walk is missing"), ("not json", "walk is missing"),
                          (json.dumps({"relevance": "relevant", "kind": "factual"}), "Answer every question"),
                          (json.dumps({"kind": "factual"}), "answered where"),
                          (json.dumps({**walked, "rational": "yes"}), "after the path reached a label")):
        body = {"decision": "protocol", "reason": "Not in the text.", **({"path": path} if path else {})}
        response = client.post(url, body, HTTP_HX_REQUEST="true")
        assert response.status_code == 400 and problem in response.content.decode(), (path, response.content[:300])
    assert not GoldLabel.objects.filter(sentence=setup["sentences"][0]).exists()
    response = client.post(url, {"decision": "protocol", "path": json.dumps(walked), "reason": ""}, HTTP_HX_REQUEST="true")
    assert "Give a reason" in response.content.decode()
    # Keys in any order (PostgreSQL's jsonb keeps its own): the walk is the same.
    in_another_order = json.dumps(dict(reversed(list(walked.items()))))
    response = client.post(url, {"decision": "protocol", "path": in_another_order, "reason": "Not in the text."},
                           HTTP_HX_REQUEST="true")
    assert response["HX-Trigger"] == "dispute-resolved"
    gold = GoldLabel.objects.get(sentence=setup["sentences"][0])
    assert (gold.label, gold.provenance) == (I, GoldProvenance.ADJUDICATION)
    setup["adjudication"].refresh_from_db()
    assert setup["adjudication"].path == walked


def test_resolve_without_javascript_redirects_back(setup):
    client = client_for(setup["judge"])
    url = f"/p/{setup['project'].slug}/adjudication/{setup['adjudication'].pk}/resolve/"
    response = client.post(url, {"decision": f"side-{setup['a2'].pk}", "reason": "B is right"})
    assert response.status_code == 302
    assert GoldLabel.objects.get(sentence=setup["sentences"][0]).label == I


def test_lead_overrides_gold_and_reopens_an_annotation(setup):
    client = client_for(setup["lead"])
    sentence = setup["sentences"][1]
    url = f"/p/{setup['project'].slug}/gold/sentence/{sentence.pk}/"
    response = client.post(url, {"label": R, "reason": ""})
    assert response.status_code == 422 and "Give a reason" in response.content.decode()
    client.post(url, {"label": R, "reason": "Guideline 3"})
    page = client.get(url).content.decode()
    assert "Lead override" in page and "Guideline 3" in page and 'data-gold-label="reliable"' in page
    response = client.post(
        f"/p/{setup['project'].slug}/gold/assignment/{setup['a1'].pk}/reopen/",
        {"reason": "Recheck", "next": "https://evil.example/"},
    )
    assert response.status_code == 302 and response["Location"] == f"/p/{setup['project'].slug}/"
    setup["a1"].refresh_from_db()
    assert setup["a1"].status == Assignment.Status.IN_PROGRESS
    # The agreed gold of sentence 3 is cleared with history; the override on sentence 2 stays.
    third = setup["sentences"][2]
    assert not GoldLabel.objects.filter(sentence=third).exists()
    assert GoldEvent.objects.filter(sentence=third).last().new_label == ""
    assert GoldLabel.objects.get(sentence=sentence).label == R


def test_a_lead_reopens_an_annotation_from_the_turn_page(setup):
    """Issue 50, item 10: reopening was only on a sentence's gold page, not reachable from the turn page."""
    client = client_for(setup["lead"])
    turn_url = f"/p/{setup['project'].slug}/turns/{setup['turn'].pk}/"
    page = client.get(turn_url).content.decode()
    reopen = f"/p/{setup['project'].slug}/gold/assignment/{setup['a1'].pk}/reopen/"
    assert 'data-testid="turn-reopen"' in page and f'action="{reopen}"' in page
    assert f"Reopen the turn for {setup['ann1'].username}" in page
    response = client.post(reopen, {"reason": "Recheck sentence 2", "next": turn_url})
    assert response.status_code == 302 and response["Location"] == turn_url
    setup["a1"].refresh_from_db()
    assert setup["a1"].status == Assignment.Status.IN_PROGRESS
    # Reopened, it is no longer offered; the other annotator's still is.
    page = client.get(turn_url).content.decode()
    assert f'action="{reopen}"' not in page and f"/gold/assignment/{setup['a2'].pk}/reopen/" in page


def test_reports_page_shows_agreement_and_gold_and_invalidates_on_new_gold(setup):
    client = client_for(setup["lead"])
    html = client.get(f"/p/{setup['project'].slug}/reports/").content.decode()
    assert "Krippendorff" in html and "Percent agreement" in html and "Cohen" in html
    assert "<svg" in html and "gpt-x" in html
    assert html.count("Download") >= 10
    assert "<script" not in html.split("<main")[1].split("</main>")[0]
    # 2 of 3 sentences agree.
    assert "66.7%" in html

    def gold_counts():
        rows = list(csv.reader(io.StringIO(client.get(f"/p/{setup['project'].slug}/reports/labels.csv").content.decode())))
        return {row[0]: int(row[1]) for row in rows[1:]}

    assert gold_counts()["Invented"] == 0 and gold_counts()["Speculative"] == 1
    client_for(setup["judge"]).post(
        f"/p/{setup['project'].slug}/adjudication/{setup['adjudication'].pk}/resolve/",
        {"decision": f"side-{setup['a2'].pk}", "reason": "B"},
    )
    assert gold_counts()["Invented"] == 1


def test_csv_downloads_raw_numbers_and_quotes_formulas(setup):
    setup["turn"].dialogue.__class__.objects.filter(pk=setup["turn"].dialogue_id).update(generator_model="=SUM(1,2)")
    client = client_for(setup["lead"])
    response = client.get(f"/p/{setup['project'].slug}/reports/agreement.csv")
    assert response["Content-Type"].startswith("text/csv")
    rows = list(csv.reader(io.StringIO(response.content.decode())))
    assert rows[0] == ["Variable", "Compared over", "Units", "Krippendorff's alpha", "Percent agreement", "Cohen's kappa",
                       "Left out (label reached by several paths)", "Kind", "Metric"]
    assert float(rows[1][4]) == pytest.approx(2 / 3)
    assert rows[1][-2:] == ["label", "nominal α"] and rows[2][-2:] == ["choice", "nominal α"]
    models = list(csv.reader(io.StringIO(client.get(f"/p/{setup['project'].slug}/reports/model.csv").content.decode())))
    assert models[1][0] == "'=SUM(1,2)"
    assert client.get(f"/p/{setup['project'].slug}/reports/nope.csv").status_code == 404


@pytest.mark.parametrize("model_name", [";=1+1", "x;=1+1", "a|@SUM(1)", "b\t=1", "c, -2+3", "d;+cmd", "e;\r=1"])
def test_csv_cells_with_a_formula_after_any_separator_stay_one_text_cell(setup, model_name):
    """Issue 22 item 8: a spreadsheet may split a CSV line on , ; tab or |; a formula trigger after any of them
    must not start a cell of its own, whatever separator the spreadsheet picks."""
    setup["turn"].dialogue.__class__.objects.filter(pk=setup["turn"].dialogue_id).update(generator_model=model_name)
    raw = client_for(setup["lead"]).get(f"/p/{setup['project'].slug}/reports/model.csv").content.decode()
    for separator in (",", ";", "\t", "|"):
        for row in csv.reader(io.StringIO(raw), delimiter=separator):
            for cell in row:
                if re.fullmatch(r"-?[0-9.eE+-]+", cell):
                    continue  # a number (a kappa may be negative) is data, not a formula
                assert cell.lstrip(" ")[:1] not in ("=", "+", "-", "@", "\t", "\r"), (separator, cell, raw)
    assert "'" + model_name in list(csv.reader(io.StringIO(raw)))[1][0]


@pytest.mark.parametrize("model_name", ["\n=1+1", " \n=cmd", "\r\n@SUM(1)", "\x0b-2+3", "\n\n+1", "x;\n=1", "\x01=1"])  # NUL: PostgreSQL stores none, every write route refuses it
def test_csv_cells_whose_first_visible_character_starts_a_formula_are_guarded(setup, model_name):
    """Issue 38 item 10: a spreadsheet skips leading line breaks, spaces and control characters; the first
    character it sees decides whether the cell is a formula."""
    setup["turn"].dialogue.__class__.objects.filter(pk=setup["turn"].dialogue_id).update(generator_model=model_name)
    raw = client_for(setup["lead"]).get(f"/p/{setup['project'].slug}/reports/model.csv").content.decode()
    invisible = "".join(map(chr, range(33))) + "\x7f"
    for separator in (",", ";"):
        for row in csv.reader(io.StringIO(raw), delimiter=separator):
            for cell in row:
                if re.fullmatch(r"-?[0-9.eE+-]+", cell):
                    continue
                assert cell.lstrip(invisible)[:1] not in ("=", "+", "-", "@"), (separator, cell, raw)
    assert list(csv.reader(io.StringIO(raw)))[1][0] == "'" + model_name


def test_protocol_comparison_with_an_independent_project_on_the_same_data(setup):
    other = ProjectFactory(slug="amazon-independent", name="Amazon independent", protocol_mode=ProtocolMode.INDEPENDENT)
    member_lead = setup["lead"]
    from annotator.models import Membership

    Membership.objects.create(project=other, user=member_lead, role=Role.LEAD)
    ann1, ann2 = annotators(other)
    turn = TurnFactory(dialogue=DialogueFactory(project=other, external_id=setup["turn"].dialogue.external_id),
                       index=setup["turn"].index)
    submit(turn, ann1, [F, S, X])
    submit(turn, ann2, [F, S, F])
    client = client_for(member_lead)
    html = client.get(f"/p/{setup['project'].slug}/reports/").content.decode()
    assert "Amazon independent" in html and "1 shared dialogue" in html
    rows = list(csv.reader(io.StringIO(
        client.get(f"/p/{setup['project'].slug}/reports/protocols.csv?compare=amazon-independent").content.decode()
    )))
    # Each row names the protocol and version its figures cover, and the mode.
    assert [r[1] for r in rows[1:]] == ["CogniBench protocol v1 (built-in), sequential",
                                        "CogniBench protocol v1 (built-in), independent"]
    assert [float(r[4]) for r in rows[1:]] == [pytest.approx(2 / 3), pytest.approx(2 / 3)]
    assert [r[2] for r in rows[1:]] == ["3", "3"]  # the same three units in both


def test_protocol_comparison_compares_the_same_units_when_the_two_imports_segmented_differently(setup):
    """The same response split into 3 units in one project and 2 in the other (the first two merged): only the
    unit both have is compared, and each row says how many of its own units were left out."""
    other = ProjectFactory(slug="amazon-merged", name="Amazon merged", protocol_mode=ProtocolMode.INDEPENDENT)
    from annotator.models import Membership

    Membership.objects.create(project=other, user=setup["lead"], role=Role.LEAD)
    ann1, ann2 = annotators(other)
    turn = TurnFactory(dialogue=DialogueFactory(project=other, external_id=setup["turn"].dialogue.external_id),
                       index=setup["turn"].index,
                       sentences=["The Amazon flows through Brazil. It is probably the most important river on Earth.",
                                  "Hello there!"])
    submit(turn, ann1, [F, X])
    submit(turn, ann2, [S, S])
    rows = list(csv.reader(io.StringIO(client_for(setup["lead"]).get(
        f"/p/{setup['project'].slug}/reports/protocols.csv?compare=amazon-merged").content.decode())))
    header, mine, theirs = rows
    assert header[2] == "Units" and header[6] == "Own units left out"
    assert (mine[2], mine[6]) == ("1", "2") and (theirs[2], theirs[6]) == ("1", "1")
    assert float(theirs[4]) == 0.0  # on "Hello there!" the merged project's annotators disagreed (X vs S)
    # The figures are cached until either project's data changes: a third annotator of the merged project counts.
    (third,) = annotators(other, 1)
    submit(turn, third, [F, S])
    rows = list(csv.reader(io.StringIO(client_for(setup["lead"]).get(
        f"/p/{setup['project'].slug}/reports/protocols.csv?compare=amazon-merged").content.decode())))
    assert float(rows[2][4]) == pytest.approx(1 / 3)  # X, S, S on "Hello there!": one agreeing pair of three


def test_project_page_links_for_each_role(setup):
    slug = setup["project"].slug
    lead_page = client_for(setup["lead"]).get(f"/p/{slug}/").content.decode()
    judge_page = client_for(setup["judge"]).get(f"/p/{slug}/").content.decode()
    annotator_page = client_for(setup["ann1"]).get(f"/p/{slug}/").content.decode()
    assert "Adjudication queue" in lead_page and "Reports" in lead_page
    assert "Adjudication queue" in judge_page and "Reports" not in judge_page
    assert "Adjudication queue" not in annotator_page


def test_navigation_badge_counts_open_disputes_for_adjudicators_only(setup):
    slug = setup["project"].slug
    judge_page = client_for(setup["judge"]).get("/").content.decode()
    assert "1 open dispute to adjudicate" in judge_page and f"/p/{slug}/adjudication/" in judge_page
    assert "open dispute" not in client_for(setup["ann1"]).get("/").content.decode()


def test_protocol_comparison_counts_qa_instances_per_500_statements(setup):
    from annotator.models import Question

    client = client_for(setup["lead"])
    url = f"/p/{setup['project'].slug}/reports/protocols.csv"
    rows = list(csv.reader(io.StringIO(client.get(url).content.decode())))
    assert rows[0][-2:] == ["QA instances", "QA instances per 500 statements"]
    assert rows[1][-2:] == ["0", "0.0"]
    Question.objects.create(project=setup["project"], turn=setup["turn"], asked_by=setup["ann1"])
    rows = list(csv.reader(io.StringIO(client.get(url).content.decode())))
    # One question over 6 judged statements (3 sentences x 2 annotators).
    assert rows[1][-2:] == ["1", str(round(500 / 6, 2))]


def test_after_new_gold_the_reports_page_shows_the_older_numbers_at_once_and_reloads_when_a_worker_has_the_new(
        setup, django_capture_on_commit_callbacks):
    import re

    from annotator.tasks import reports_refresh

    client = client_for(setup["lead"])
    slug = setup["project"].slug
    page, status = f"/p/{slug}/reports/", f"/p/{slug}/reports/status/"

    def invented_on_page(html):
        table = html.split('id="table-labels"')[1].split("</table>")[0]
        return int(re.search(r'<th scope="row">Invented</th><td class="num">(\d+)</td>', table).group(1))

    html = client.get(page).content.decode()  # nothing computed before: computed now
    assert "report-refreshing" not in html and invented_on_page(html) == 0
    client_for(setup["judge"]).post(f"/p/{slug}/adjudication/{setup['adjudication'].pk}/resolve/",
                                    {"decision": f"side-{setup['a2'].pk}", "reason": "B"})

    with django_capture_on_commit_callbacks() as asked:
        html = client.get(page).content.decode()
        client.get(page)
    assert 'id="report-refreshing"' in html and 'hx-trigger="every 3s"' in html
    assert invented_on_page(html) == 0  # the older numbers, shown at once
    assert len(asked) == 1  # one refresh per new data version, however often the page is opened
    assert "report-refreshing" in client.get(status).content.decode()

    reports_refresh(setup["project"].pk)  # what the worker runs
    assert client.get(status).headers["HX-Refresh"] == "true"
    html = client.get(page).content.decode()
    assert "report-refreshing" not in html and invented_on_page(html) == 1


def test_a_refresh_no_worker_took_is_computed_by_the_page_itself(setup):
    import time

    from django.core.cache import cache

    from annotator.reports.agreement import data_version
    from annotator.reports.services import REFRESH_PATIENCE_SECONDS

    client = client_for(setup["lead"])
    slug = setup["project"].slug
    client.get(f"/p/{slug}/reports/")
    client_for(setup["judge"]).post(f"/p/{slug}/adjudication/{setup['adjudication'].pk}/resolve/",
                                    {"decision": f"side-{setup['a2'].pk}", "reason": "B"})
    assert "report-refreshing" in client.get(f"/p/{slug}/reports/").content.decode()
    key = f"reports-refresh:{setup['project'].pk}:{data_version(setup['project'])}"
    cache.set(key, time.time() - REFRESH_PATIENCE_SECONDS - 1, timeout=3600)  # asked long ago, never done
    assert "report-refreshing" not in client.get(f"/p/{slug}/reports/").content.decode()
