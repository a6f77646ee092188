"""The claims panels, disputes, triplet page and reports through the test client, as users reach them."""

import pytest
from django.urls import reverse

from annotator.models import TripletAdjudication, TripletAnnotation, TripletGold
from annotator.claims import services as svc
from annotator.work.services import assignment_submit
from annotator.domain.vocabulary import Label, Role

from .factories import member
from .factories_claims import turn_with_triplets, views_project, working
from .factories_gold import submit
from .factories_workspace import NO_PASSWORD, answer_label, label_all

pytestmark = pytest.mark.django_db
HTMX = {"HTTP_HX_REQUEST": "true"}


def test_screen_shows_the_panels_only_when_the_project_switches_them_on(client):
    project = views_project()
    turn = turn_with_triplets(project)
    assignment, user = working(project, turn)
    assignment = answer_label(assignment, turn.sentences.get(index=0), Label.INVENTED, user)
    client.force_login(user)
    url = reverse("annotate", args=[assignment.pk])
    page = client.get(url + f"?sentence={turn.sentences.get(index=0).pk}").content.decode()
    assert 'id="triplet-panel"' in page and "flows through" in page
    assert 'id="claims-extras"' in page and "conflation" in page and "5 - critical" in page
    project.enable_triplets = project.enable_severity = project.enable_error_types = False
    project.save()
    page = client.get(url + f"?sentence={turn.sentences.get(index=0).pk}").content.decode()
    assert 'id="triplet-panel"' not in page and 'id="claims-extras"' not in page
    project.enable_severity = True
    project.save()
    page = client.get(url + f"?sentence={turn.sentences.get(index=0).pk}").content.decode()
    assert 'class="severity-form"' in page and 'id="error-type-select"' not in page
    # A faithful sentence gets no severity panel.
    page = client.get(url + f"?sentence={turn.sentences.get(index=1).pk}").content.decode()
    assert 'id="claims-extras"' not in page


def test_label_a_triplet_returns_the_panel_and_the_new_version(client):
    project = views_project()
    turn = turn_with_triplets(project)
    assignment, user = working(project, turn)
    triplet = turn.triplets.get(index=1)
    client.force_login(user)
    url = reverse("claims_act", args=[assignment.pk, "triplet_label"])
    response = client.post(url, {"triplet": triplet.pk, "label": "Contradiction", "version": 0, "request_id": "x1"}, **HTMX)
    assert response.status_code == 200 and response["X-Assignment-Version"] == "1"
    assert 'data-label="Contradiction"' in response.content.decode()
    assert "1 of 2 labelled" in response.content.decode()
    stale = client.post(url, {"triplet": triplet.pk, "label": "Neutral", "version": 0}, **HTMX)
    assert stale.status_code == 409 and "another tab" in stale.content.decode()
    assert TripletAnnotation.objects.get(triplet=triplet).label == "Contradiction"
    bad = client.post(url, {"triplet": triplet.pk, "label": "supported", "version": 1}, **HTMX)
    assert bad.status_code == 400 and "Unknown triplet label" in bad.content.decode()


def test_add_a_triplet_and_rate_a_sentence_through_the_panels(client):
    project = views_project()
    turn = turn_with_triplets(project, triplets=())
    assignment, user = working(project, turn)
    sentence = turn.sentences.get(index=1)
    assignment = answer_label(assignment, sentence, Label.MISLEADING, user)
    client.force_login(user)
    response = client.post(reverse("claims_act", args=[assignment.pk, "triplet_add"]),
                           {"head": "Amazon", "relation": "is", "tail": "most important", "sentence": sentence.pk}, **HTMX)
    assert response.status_code == 200 and "most important" in response.content.decode()
    response = client.post(reverse("claims_act", args=[assignment.pk, "severity"]),
                           {"sentence": sentence.pk, "severity": "4", "justification": "Overclaims"}, **HTMX)
    assert response.status_code == 200 and 'id="decision-panel"' in response.content.decode()
    response = client.post(reverse("claims_act", args=[assignment.pk, "error_type"]),
                           {"sentence": sentence.pk, "error_type": "overgeneralization"}, **HTMX)
    annotation = sentence.annotations.get()
    assert (annotation.severity, annotation.justification, annotation.error_type) == (4, "Overclaims", "overgeneralization")
    # Without htmx (no JavaScript) the form posts redirect back to the screen.
    response = client.post(reverse("claims_act", args=[assignment.pk, "severity"]), {"sentence": sentence.pk, "severity": ""})
    assert response.status_code == 302
    annotation.refresh_from_db()
    assert annotation.severity is None


def test_panels_of_another_annotator_are_404(client):
    project = views_project()
    turn = turn_with_triplets(project)
    assignment, _ = working(project, turn)
    intruder = member(project, password=NO_PASSWORD)
    client.force_login(intruder)
    response = client.post(reverse("claims_act", args=[assignment.pk, "triplet_label"]),
                           {"triplet": turn.triplets.first().pk, "label": "Neutral"}, **HTMX)
    assert response.status_code == 404
    assert client.get(reverse("claims_triplet_panel", args=[assignment.pk])).status_code == 404
    assert client.get(reverse("claims_reports", args=[project.slug])).status_code == 404
    assert client.get(reverse("claims_disputes", args=[project.slug])).status_code == 404


def test_adjudicator_decides_a_triplet_dispute_on_the_disputes_page(client):
    project = views_project()
    turn = turn_with_triplets(project, triplets=(("Amazon", "flows through", "Brazil"),))
    triplet = turn.triplets.get()
    for label in ("Entailment", "Neutral"):
        assignment, user = working(project, turn)
        assignment = label_all(assignment, Label.FAITHFUL, user)
        assignment = svc.triplet_label_set(assignment, triplet.pk, label, actor=user).assignment
        assignment_submit(assignment, actor=user)
    dispute = TripletAdjudication.objects.get()
    adjudicator = member(project, Role.ADJUDICATOR, password=NO_PASSWORD)
    client.force_login(adjudicator)
    page = client.get(reverse("claims_disputes", args=[project.slug])).content.decode()
    assert "(Amazon, flows through, Brazil)" in page and "Neutral" in page
    response = client.post(reverse("claims_dispute_resolve", args=[project.slug, dispute.pk]),
                           {"label": "Entailment", "reason": "Paragraph 1"})
    assert response.status_code == 302
    assert TripletGold.objects.get(triplet=triplet).label == "Entailment"
    assert "No open triplet disputes" in client.get(reverse("claims_disputes", args=[project.slug])).content.decode()


def test_lead_manages_the_triplets_of_a_turn(client):
    project = views_project()
    turn = turn_with_triplets(project, triplets=())
    lead = member(project, Role.LEAD, password=NO_PASSWORD)
    client.force_login(lead)
    url = reverse("claims_turn_triplets_change", args=[project.slug, turn.pk])
    client.post(url, {"action": "add", "head": "Amazon", "relation": "crosses", "tail": "Peru"})
    triplet = turn.triplets.get()
    client.post(url, {"action": "edit", "triplet": triplet.pk, "head": "Amazon", "relation": "crosses", "tail": "Colombia"})
    client.post(url, {"action": "override", "triplet": triplet.pk, "label": "Neutral", "reason": "not in the reference"})
    page = client.get(reverse("claims_turn_triplets", args=[project.slug, turn.pk])).content.decode()
    assert "(Amazon, crosses, Colombia)" in page and "Lead override" in page
    client.post(url, {"action": "delete", "triplet": triplet.pk})
    assert not turn.triplets.exists()
    annotator = member(project, password=NO_PASSWORD)
    client.force_login(annotator)
    assert client.get(reverse("claims_turn_triplets", args=[project.slug, turn.pk])).status_code == 404


def test_reports_page_figures_per_generator_model_and_severity_filter(client):
    project = views_project(severity_threshold=4)
    a_turn = turn_with_triplets(project, generator_model="model-a")
    b_turn = turn_with_triplets(project, generator_model="model-b")
    first, second = annotators = [member(project, password=NO_PASSWORD) for _ in range(2)]
    # model-a: sentence 0 invented (severity 5), 1 misleading (severity 2), 2 irrelevant.
    for user in annotators:
        submit(a_turn, user, [Label.INVENTED, Label.MISLEADING, Label.IRRELEVANT])
        submit(b_turn, user, [Label.FAITHFUL, Label.RELIABLE, Label.IRRELEVANT])
    from annotator.gold.derivation import gold_derive_for_turn

    for turn in (a_turn, b_turn):
        gold_derive_for_turn(turn)
    from annotator.models import GoldLabel

    GoldLabel.objects.filter(sentence__turn=a_turn, sentence__index=0).update(severity=5, error_type="conflation")
    GoldLabel.objects.filter(sentence__turn=a_turn, sentence__index=1).update(severity=2)
    t1, t2 = a_turn.triplets.order_by("index")
    TripletGold.objects.create(triplet=t1, label="Entailment", provenance="agreement")
    TripletGold.objects.create(triplet=t2, label="Contradiction", provenance="agreement")
    lead = member(project, Role.LEAD, password=NO_PASSWORD)
    client.force_login(lead)
    url = reverse("claims_reports", args=[project.slug])
    page = client.get(url).content.decode()
    assert "of severity ≥ 4 (project threshold)" in page
    hpt_a = client.get(url).context["hallucinations"]
    by_model = {row["model"]: row["tally"] for row in hpt_a}
    assert by_model["model-a"].hallucinations == 1 and by_model["model-b"].hallucinations == 0
    # "The Amazon flows through Brazil." has 5 words; the whole response 5 + 9 + 2.
    assert by_model["model-a"].token_accuracy == pytest.approx(11 / 16)
    all_rows = {row["model"]: row["tally"] for row in client.get(url + "?severity=all").context["hallucinations"]}
    assert all_rows["model-a"].hallucinations == 2 and all_rows["model-a"].per_turn == 2.0
    triplets = client.get(url).context["triplets"]
    gold = {entry["model"]: entry["tally"] for entry in triplets["gold"]}
    assert gold["model-a"].contradictory_share == 1.0
    errors = {entry["model"]: entry for entry in client.get(url).context["error_types"]}
    assert errors["model-a"]["eligible"] == 2 and errors["model-a"]["typed"] == 1
    assert 'data-contradictory>1.000' in page
