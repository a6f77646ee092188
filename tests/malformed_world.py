"""The world the malformed-input tests probe (tests/test_security_malformed.py): one project with an
annotator half way through a turn, a peer's submitted and disputed turn, a triplet dispute, a question,
feedback, a qualification result, an import, an export and an auto-label job; and a snapshot of every row
a POST of the HTML routes could change."""

from django.contrib.auth.models import Permission
from django.db import connection
from rest_framework.authtoken.models import Token

from annotator import models
from annotator.domain.vocabulary import Label, Role
from autolabel.models import AutoLabelJob, EndpointTest, LLMProfile, PromptVersion
from tests.factories import AssignmentFactory, UserFactory, member
from tests.factories_claims import turn_with_triplets, views_project
from tests.factories_workspace import NO_PASSWORD, answer_label


class World:
    pass


def make_world():
    w = World()
    w.project = views_project(slug="pilot")
    w.lead = member(w.project, Role.LEAD, username="lead", password=NO_PASSWORD)
    w.adjudicator = member(w.project, Role.ADJUDICATOR, username="adjudicator", password=NO_PASSWORD)
    w.annotator = member(w.project, Role.ANNOTATOR, username="annotator", password=NO_PASSWORD)
    w.peer = member(w.project, Role.ANNOTATOR, username="peer", password=NO_PASSWORD)
    w.turn = turn_with_triplets(w.project)
    w.sentence = w.turn.sentences.order_by("index").first()
    w.triplet = w.turn.triplets.order_by("index").first()
    # The annotator half way through the turn: the first sentence labelled, with one evidence span.
    w.assignment = AssignmentFactory(turn=w.turn, annotator=w.annotator)
    answer_label(w.assignment, w.sentence, Label.INVENTED, w.annotator)
    w.annotation = models.SentenceAnnotation.objects.get(assignment=w.assignment, sentence=w.sentence)
    w.evidence = models.EvidenceSpan.objects.create(annotation=w.annotation, start=4, end=10, text="Amazon")
    # A submitted turn of the peer's, disputed: an adjudication of its first sentence, a triplet dispute.
    other = turn_with_triplets(w.project)
    w.peer_assignment = AssignmentFactory(turn=other, annotator=w.peer, status=models.Assignment.Status.SUBMITTED)
    first = other.sentences.order_by("index").first()
    w.peer_annotation = models.SentenceAnnotation.objects.create(assignment=w.peer_assignment, sentence=first,
                                                                 label=Label.FAITHFUL)
    w.adjudication = models.Adjudication.objects.create(sentence=first, turn=other)
    w.triplet_dispute = models.TripletAdjudication.objects.create(triplet=other.triplets.first(), turn=other)
    w.question = models.Question.objects.create(project=w.project, turn=w.turn, sentence=w.sentence, asked_by=w.annotator)
    models.QuestionMessage.objects.create(question=w.question, author=w.annotator, body="Is this grounded?")
    w.feedback = models.Feedback.objects.create(project=w.project, annotation=w.annotation, lead=w.lead,
                                                expected_label=Label.FAITHFUL, comment="Look again.")
    w.result = models.QualificationResult.objects.create(project=w.project, annotator=w.peer, correct=1, total=3)
    w.batch = models.ImportBatch.objects.create(project=w.project, kind=models.ImportBatch.Kind.JSONL, filename="a.jsonl")
    w.export_job = models.ExportJob.objects.create(project=w.project, format="jsonl")
    w.profile = LLMProfile.objects.create(name="local", base_url="http://127.0.0.1:9/v1")
    prompt = PromptVersion.objects.create(project=w.project, version=1)
    w.endpoint = LLMProfile.objects.create(project=w.project, name="own", base_url="http://127.0.0.1:9/v1")
    w.endpoint_test = EndpointTest.objects.create(profile=w.endpoint)
    w.job = AutoLabelJob.objects.create(project=w.project, profile=w.profile, prompt_version=prompt, model="m")
    w.invite = models.ProjectInvite.objects.create(project=w.project, token="pilot-invite", role=Role.ANNOTATOR,
                                                   expires_at="2099-01-01T00:00:00Z")
    # Someone the site administrator lets create projects (and who is in no project yet: joins with the link).
    w.creator = member(views_project(slug="creators-own"), Role.LEAD, username="creator", password=NO_PASSWORD)
    w.creator.user_permissions.add(Permission.objects.get(codename="add_project", content_type__app_label="annotator"))
    # A site administrator: the page "Who may create projects" is theirs.
    w.administrator = UserFactory(username="site-admin", is_staff=True, is_superuser=True, password=NO_PASSWORD)
    w.users = {"lead": w.lead, "adjudicator": w.adjudicator, "annotator": w.annotator, "peer": w.peer,
               "creator": w.creator, "administrator": w.administrator}
    return w


def path_values(w, route_name):
    """The world's object for each path parameter of ``route_name``."""
    pk = {"qa:question": w.question.pk, "qa:question_close": w.question.pk, "qa:question_promote": w.question.pk,
          "qa:question_messages": w.question.pk, "qa:feedback_acknowledge": w.feedback.pk,
          "qa:feedback_amend": w.feedback.pk, "qa:qualification_result": w.result.pk,
          "qa:qualification_retry": w.result.pk}.get(route_name, 1)
    return {
        "slug": w.project.slug, "turn_id": w.turn.pk, "sentence_id": w.sentence.pk, "batch_id": w.batch.pk,
        "assignment_id": w.peer_assignment.pk if route_name.startswith(("workspace_re", "gold_reopen"))
        else w.assignment.pk,
        "adjudication_id": w.triplet_dispute.pk if route_name == "claims_dispute_resolve" else w.adjudication.pk,
        "annotation_id": w.peer_annotation.pk, "pk": pk, "fmt": "jsonl", "table": "agreement",
        "job_id": w.job.pk if route_name.startswith("autolabel:") else w.export_job.pk,
        "user_id": w.peer.pk, "invite_id": w.invite.pk, "token": w.invite.token,
        "endpoint_id": w.endpoint.pk, "test_id": w.endpoint_test.pk,
    }


def snapshot():
    """Everything a POST of these routes could change."""
    counted = [models.AnnotationEvent, models.SentenceAnnotation, models.EvidenceSpan, models.GoldLabel,
               models.GoldEvent, models.Question, models.QuestionMessage, models.Feedback, models.GuidelineExample,
               models.ClaimTriplet, models.TripletAnnotation, models.ExportJob, models.QualificationResult,
               models.Assignment, models.ImportBatch, AutoLabelJob, Token, models.UnitFlag, models.SegmentationChange,
               models.Project, models.Membership, models.ProjectInvite]
    state = {model.__name__: model.objects.count() for model in counted}
    state["assignments"] = list(models.Assignment.objects.order_by("pk").values_list(
        "pk", "status", "version", "annotator_id"))
    state["annotations"] = list(models.SentenceAnnotation.objects.order_by("pk").values_list(
        "pk", "path", "label", "note", "severity", "justification", "error_type"))
    state["units"] = list(models.Sentence.objects.order_by("pk").values_list("pk", "index", "start", "end"))
    state["triplets"] = list(models.ClaimTriplet.objects.order_by("pk").values_list("pk", "head", "relation", "tail"))
    state["adjudications"] = list(models.Adjudication.objects.order_by("pk").values_list("pk", "status", "path"))
    state["triplet_disputes"] = list(models.TripletAdjudication.objects.values_list("pk", "status"))
    state["questions"] = list(models.Question.objects.values_list("pk", "status"))
    state["feedback"] = list(models.Feedback.objects.values_list("pk", "acknowledged_at"))
    state["qualification"] = (list(models.Turn.objects.filter(is_qualification=True).values_list("pk", flat=True)),
                              models.Project.objects.get(slug="pilot").qualification_pass_mark,
                              models.Project.objects.get(slug="pilot").qualification_auto_retries)
    state["people"] = list(models.Membership.objects.order_by("pk").values_list("pk", "role"))
    state["settings"] = list(models.Project.objects.order_by("pk").values_list(
        "pk", "name", "overlap", "protocol_mode", "imported_gold", "guidelines", "show_prelabels"))
    state["invites"] = list(models.ProjectInvite.objects.order_by("pk").values_list("pk", "revoked_at", "uses"))
    state["jobs"] = list(AutoLabelJob.objects.values_list("pk", "cancel_requested"))
    return state


def rows_written():
    """How many rows this connection's transaction has inserted, updated or deleted so far, rolled back ones
    included. While it stays put, nothing was written, so ``snapshot()`` is what it was: one query where a
    snapshot takes about forty (it was half the CPU of tests/test_security_malformed.py)."""
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            # The counts of the transaction still open (the test's), its savepoints included.
            cursor.execute("SELECT COALESCE(SUM(n_tup_ins + n_tup_upd + n_tup_del), 0) FROM pg_stat_xact_user_tables")
        else:
            cursor.execute("SELECT total_changes()")  # SQLite: since the connection opened
        return cursor.fetchone()[0]


class Unchanged:
    """``snapshot()`` as it was when made, and whether it changed since: taken again only when a row was written."""

    def __init__(self):
        # PostgreSQL's count is the open transaction's: in autocommit (a transactional test) it would stay at 0.
        assert connection.in_atomic_block, "Unchanged needs the test's transaction (django_db, not transaction=True)"
        self.state, self.written = snapshot(), rows_written()

    def changed(self):
        """True once for each change of the snapshot (the new state becomes the one to compare with)."""
        written = rows_written()
        if written == self.written:
            return False
        self.written = written
        state = snapshot()
        if state == self.state:
            return False
        self.state = state
        return True
