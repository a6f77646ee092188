"""The malformed-input probes of tests/test_security_malformed.py: how to reach each POST route and what its
fields hold, the malformed values of each kind, and the query parameters the HTML pages read.

A POST route added to the URL conf fails ``test_every_html_post_route_has_malformed_probes`` until it has an
entry in ``PROBES``.
"""

from dataclasses import dataclass, field

from annotator.domain.vocabulary import Label

# What a field holds, and the malformed values each kind is sent. A request carrying one of
# these must be refused by the form (400) before any lookup or service runs.
ID, NUMBER, ENUM, TEXT, SHORT = "id", "number", "enum", "text", "short"
MALFORMED = {
    ID: ["abc", "-1", "-1000000000", "99999999999999999999", "1.5", "1e3", "0x1f", "1\x00"],
    NUMBER: ["abc", "-1000000000", "99999999999999999999", "1e309", "nan", "9" * 5000],
    ENUM: ["no-such-value", "x" * 5001, "side-99999999999999999999", "relevant\x00"],
    TEXT: ["x" * 100_001, "a\x00b"],
    SHORT: ["x" * 5001, "a\x00b"],  # an idempotency key, a filter: short texts
}


@dataclass
class Probe:
    """How to reach one POST route: who, which path values, a well-formed body, and its fields' kinds."""

    role: str
    fields: dict  # name -> kind (ID, NUMBER, ...)
    body: dict = field(default_factory=dict)  # well-formed values of the other fields
    required: tuple = ()  # fields whose absence is itself malformed (answered 400)
    path: dict = field(default_factory=dict)  # path parameters beyond the route's defaults
    session: dict = field(default_factory=dict)  # what the client's session holds first (an opened invite link)


SENTENCE_WRITE = {"sentence": ID, "version": NUMBER, "request_id": SHORT, "seconds": NUMBER}
PANEL_WRITE = {"version": NUMBER, "request_id": SHORT}

# A project's LLM endpoint (autolabel/endpoints/forms.py).
ENDPOINT_FIELDS = {"name": SHORT, "base_url": SHORT, "default_model": SHORT, "api_key_env": SHORT,
                   "input_price_per_million": NUMBER, "output_price_per_million": NUMBER, "concurrency": NUMBER,
                   "timeout_seconds": NUMBER}
ENDPOINT_BODY = {"name": "own", "base_url": "http://127.0.0.1:9/v1", "default_model": "m", "concurrency": "4",
                 "timeout_seconds": "10"}
ENDPOINT_REQUIRED = ("name", "base_url", "default_model", "concurrency", "timeout_seconds")

# One entry per POST route (per action of the routes with an ``action`` slot).
PROBES = {
    ("annotate_act", "answer"): Probe("annotator", {**SENTENCE_WRITE, "step": ENUM, "value": ENUM},
                                      {"step": "relevance", "value": "relevant"}, ("sentence", "step", "value")),
    ("annotate_act", "pick"): Probe("annotator", {**SENTENCE_WRITE, "label": ENUM}, {"label": Label.FAITHFUL},
                                    ("sentence", "label")),
    ("annotate_act", "undo"): Probe("annotator", SENTENCE_WRITE, required=("sentence",)),
    ("annotate_act", "note"): Probe("annotator", {**SENTENCE_WRITE, "note": TEXT}, {"note": "a note"}, ("sentence",)),
    ("annotate_act", "evidence_add"): Probe("annotator", {**SENTENCE_WRITE, "start": NUMBER, "end": NUMBER},
                                            {"start": "4", "end": "10"}, ("sentence",)),
    ("annotate_act", "evidence_remove"): Probe("annotator", {**SENTENCE_WRITE, "evidence": ID}, {"evidence": "evidence"},
                                               ("sentence", "evidence")),
    ("annotate_act", "submit"): Probe("annotator", {**PANEL_WRITE, "then": ENUM}, {"then": "queue"}),
    # The page's background saving takes a JSON batch (tests/test_annotation_sync.py sends it malformed JSON);
    # here it gets form bodies, and the walk's JSON body, which it refuses the same way.
    ("annotate_sync", None): Probe("annotator", {"version": NUMBER, "changes": TEXT}, {"version": "1"}),
    ("annotate_act", "time"): Probe("annotator", {"sentence": ID, "seconds": NUMBER}, {"seconds": "3"}, ("sentence",)),
    ("claims_act", "triplet_label"): Probe("annotator", {**PANEL_WRITE, "triplet": ID, "label": ENUM},
                                           {"triplet": "triplet", "label": "Neutral"}, ("triplet",)),
    ("claims_act", "triplet_add"): Probe("annotator", {**PANEL_WRITE, "head": TEXT, "relation": TEXT, "tail": TEXT,
                                                       "sentence": ID},
                                         {"head": "Amazon", "relation": "is", "tail": "wide"}),
    ("claims_act", "triplet_edit"): Probe("annotator", {**PANEL_WRITE, "triplet": ID, "head": TEXT, "relation": TEXT,
                                                        "tail": TEXT, "sentence": ID},
                                          {"triplet": "triplet", "head": "A", "relation": "b", "tail": "c"},
                                          ("triplet",)),
    ("claims_act", "triplet_delete"): Probe("annotator", {**PANEL_WRITE, "triplet": ID}, {"triplet": "triplet"},
                                            ("triplet",)),
    ("claims_act", "severity"): Probe("annotator", {**PANEL_WRITE, "sentence": ID, "severity": ENUM,
                                                    "justification": TEXT},
                                      {"severity": "3", "justification": "why"}, ("sentence",)),
    ("claims_act", "error_type"): Probe("annotator", {**PANEL_WRITE, "sentence": ID, "error_type": SHORT},
                                        {"error_type": "contradiction"}, ("sentence",)),
    ("claims_dispute_resolve", None): Probe("adjudicator", {"label": ENUM, "reason": TEXT},
                                            {"label": "Neutral", "reason": "because"}),
    # This route names its action in the body (``action``), not in the path.
    ("claims_turn_triplets_change", "add"): Probe("lead", {"action": ENUM, "head": TEXT, "relation": TEXT, "tail": TEXT,
                                                           "sentence": ID},
                                                  {"head": "A", "relation": "b", "tail": "c"}, ("action",)),
    ("claims_turn_triplets_change", "edit"): Probe("lead", {"action": ENUM, "triplet": ID, "head": TEXT,
                                                            "relation": TEXT, "tail": TEXT, "sentence": ID},
                                                   {"triplet": "triplet", "head": "A", "relation": "b", "tail": "c"},
                                                   ("action", "triplet")),
    ("claims_turn_triplets_change", "delete"): Probe("lead", {"action": ENUM, "triplet": ID}, {"triplet": "triplet"},
                                                     ("action", "triplet")),
    ("claims_turn_triplets_change", "override"): Probe("lead", {"action": ENUM, "triplet": ID, "label": ENUM,
                                                                "reason": TEXT},
                                                       {"triplet": "triplet", "label": "Neutral", "reason": "because"},
                                                       ("action", "triplet")),
    ("workspace_next", None): Probe("annotator", {}),
    ("workspace_release_stale", None): Probe("lead", {"stale": ENUM}, {"stale": "24"}),
    ("workspace_release", None): Probe("lead", {"reason": TEXT}, {"reason": "gone"}),
    ("workspace_reassign", None): Probe("lead", {"annotator": ID}, {"annotator": "peer"}, ("annotator",)),
    ("gold_queue_settings", None): Probe("lead", {"adjudication_order": ENUM, "imported_gold": ENUM},
                                         {"adjudication_order": "oldest", "imported_gold": "final"},
                                         ("adjudication_order", "imported_gold")),
    ("gold_resolve", None): Probe("adjudicator", {"decision": ENUM, "path": SHORT, "reason": TEXT, "walked_protocol": SHORT},
                                  {"decision": "protocol", "reason": "because",
                                   "path": '{"relevance": "relevant", "kind": "factual", "faithfulness": "faithful"}'}),
    ("gold_sentence", None): Probe("lead", {"label": ENUM, "reason": TEXT}, {"label": Label.FAITHFUL, "reason": "x"}),
    ("gold_reopen", None): Probe("lead", {"reason": TEXT, "next": SHORT}, {"reason": "again", "next": "/"}),
    ("project_export", None): Probe("lead", {}, path={"fmt": "jsonl"}),
    ("export_job_start", None): Probe("lead", {}, path={"fmt": "jsonl"}),
    # Files are checked by the form too (tests/test_security_uploads.py); here the fields beside them.
    ("import_upload", None): Probe("lead", {"kind": ENUM}, {"kind": "jsonl"}, ("kind",)),
    ("qa:ask", None): Probe("annotator", {"turn": ID, "sentence": ID, "body": TEXT, "path": TEXT},
                            {"turn": "turn", "body": "Is this grounded?", "path": "{}"}, ("turn",)),
    ("qa:question", None): Probe("lead", {"body": TEXT}, {"body": "An answer."}),
    ("qa:question_close", None): Probe("lead", {}),
    ("qa:question_promote", None): Probe("lead", {"step": ENUM, "expected_answer": ENUM, "text": TEXT,
                                                  "explanation": TEXT},
                                         {"step": "relevance", "expected_answer": "relevant"}),
    ("qa:feedback_acknowledge", None): Probe("annotator", {}),
    ("qa:feedback_amend", None): Probe("annotator", {"label": ENUM, "request_id": SHORT, "walked_protocol": SHORT},
                                       {"label": Label.FAITHFUL}),
    ("qa:feedback_give", None): Probe("lead", {"comment": TEXT, "expected_label": ENUM},
                                      {"comment": "Look again.", "expected_label": Label.FAITHFUL}),
    ("qa:qualification", None): Probe("lead", {"turns": ID, "pass_mark": NUMBER}, {"turns": "turn", "pass_mark": "80"},
                                      ("pass_mark",)),
    ("qa:qualification_retry", None): Probe("lead", {}),
    ("qa:qualification_retries", None): Probe("lead", {"qualification_auto_retries": NUMBER}, {},
                                              ("qualification_auto_retries",)),
    ("qa:qualification_gold_reason", None): Probe("lead", {"reason": TEXT}),
    ("autolabel:job_list", None): Probe("lead", {"profile": ID, "prompt_version": ID, "samples": NUMBER,
                                                 "threshold": NUMBER, "model": SHORT},
                                        {"profile": "profile", "samples": "5", "threshold": "3"},
                                        ("profile", "samples", "threshold")),
    ("autolabel:job_cancel", None): Probe("lead", {}),
    ("autolabel:endpoint_list", None): Probe("lead", ENDPOINT_FIELDS, ENDPOINT_BODY, ENDPOINT_REQUIRED),
    ("autolabel:endpoint_edit", None): Probe("lead", ENDPOINT_FIELDS, ENDPOINT_BODY, ENDPOINT_REQUIRED),
    ("autolabel:endpoint_test", None): Probe("lead", {}),
    ("autolabel:endpoint_delete", None): Probe("lead", {}),
    ("autolabel:learned_judge_train", None): Probe("lead", {"shape": ENUM}, {"shape": "choose"}),
    ("autolabel:learned_judge_label", None): Probe("lead", {"judge": ID}, required=("judge",)),
    ("unit_flag", None): Probe("annotator", {"sentence": ID, "kind": ENUM, "note": TEXT}, {"kind": "two_sentences"},
                               ("sentence", "kind")),
    ("unit_split", None): Probe("lead", {"sentence": ID, "offset": NUMBER, "reason": TEXT}, {"offset": "5"},
                                ("sentence", "offset")),
    ("unit_merge", None): Probe("lead", {"sentence": ID, "reason": TEXT}, required=("sentence",)),
    ("unit_flag_dismiss", None): Probe("lead", {"resolution": TEXT}, {"resolution": "One sentence."}, ("resolution",)),
    ("autolabel:job_checks", None): Probe("lead", {"strategy": ENUM, "size": NUMBER, "seed": NUMBER, "note": TEXT},
                                          {"strategy": "random", "size": "2"}, ("strategy", "size")),
    # The lead's console (annotator/projects/console_views.py).
    ("project_create", None): Probe("creator", {"name": SHORT, "slug": SHORT, "protocol_mode": ENUM, "overlap": NUMBER},
                                    {"name": "New", "protocol_mode": "sequential", "overlap": "2"},
                                    ("name", "protocol_mode", "overlap")),
    ("project_settings", None): Probe("lead", {"name": SHORT, "guidelines": TEXT, "overlap": NUMBER,
                                               "protocol_mode": ENUM, "imported_gold": ENUM,
                                               "qualification_pass_mark": NUMBER, "error_types": TEXT},
                                      {"name": "Pilot", "overlap": "3", "protocol_mode": "sequential",
                                       "imported_gold": "reference", "adjudication_order": "oldest",
                                       "drawn_turn_review": "double", "qualification_pass_mark": "0.9",
                                       "qualification_auto_retries": "0", "severity_threshold": "4"},
                                      ("overlap", "protocol_mode", "imported_gold")),
    ("project_member_add", None): Probe("lead", {"username": SHORT, "role": ENUM}, {"username": "creator",
                                                                                    "role": "annotator"},
                                        ("username",)),
    ("project_member_role", None): Probe("lead", {"role": ENUM}, {"role": "adjudicator"}, ("role",)),
    ("project_member_remove", None): Probe("lead", {"confirm": ENUM}, {"confirm": "yes"}, ("confirm",)),
    ("project_invite_create", None): Probe("lead", {"role": ENUM, "days": NUMBER}, {"role": "annotator", "days": "7"},
                                           ("role", "days")),
    ("project_invite_revoke", None): Probe("lead", {"confirm": ENUM}, {"confirm": "yes"}, ("confirm",)),
    # The invite page of the link opened in this session (annotator/projects/join_views.py).
    ("project_invite", None): Probe("creator", {"confirm": ENUM}, {"confirm": "yes"}, ("confirm",),
                                    session={"invite_token": "pilot-invite"}),
    ("project_creators", None): Probe("administrator", {"username": SHORT}, {"username": "creator"}, ("username",)),
    ("project_creator_revoke", None): Probe("administrator", {"confirm": ENUM}, {"confirm": "yes"}, ("confirm",)),
    ("project_protocol", None): Probe("lead", {"source": ENUM, "shipped": ENUM, "document": TEXT, "label_mapping": TEXT},
                                      {"source": "edited", "document": '{"id": "cognibench"}'}, ("source",)),
    # The preview judges the document's text (a 200 listing its problems is its answer); its form fields are probed.
    ("project_protocol_preview", None): Probe("lead", {"source": ENUM, "shipped": ENUM}, {"document": "{}"}),
    ("api:token-page", None): Probe("annotator", {"action": ENUM}, {"action": "create"}),
    ("login", None): Probe("annotator", {"username": SHORT, "password": SHORT}),
    ("logout", None): Probe("annotator", {}),
}

# Pages that take any method and read nothing from a POST body (they answer a POST as a GET).
READS_NO_POST = {
    "home", "project_detail", "turn_list", "turn_detail", "export_job_status", "export_job_download", "import_list",
    "import_status", "gold_queue", "gold_turn", "reports", "reports_status", "reports_csv", "qa:inbox",
    "qa:my_questions", "qa:feedback_inbox", "qa:review", "qa:measures", "qa:qualification_score",
    "qa:qualification_result", "autolabel:job_detail", "autolabel:job_evaluation", "autolabel:turn_predictions",
    "autolabel:job_faithfulness", "autolabel:job_faithfulness_csv",
    "project_people",
    "project_join",  # the link itself: it puts its token in the session and redirects, whatever the method
    "autolabel:job_comparison",  # GET only (405 to a POST); listed so that the walk probes it
    "autolabel:job_estimate", "autolabel:endpoint_test_result",
}

# Routes whose fields are not all checked to 400 by a form: the lead's raw export reads only ``fmt``
# from its path; the token page and the login form are Django's / read one fixed value.
FORM_ANSWER_NOT_REQUIRED = {"project_export", "api:token-page", "login", "logout"}

# Query parameters the HTML pages read (beyond ``page``, which Django's paginator reads leniently).
QUERY_PROBES = {
    "annotate": {"sentence": ID},
    "qa:review": {"annotator": ID, "seed": NUMBER},
    "turn_list": {"batch": ID, "topic": SHORT, "model": SHORT, "q": SHORT},
    "autolabel:turn_predictions": {"job": ID},
    "autolabel:job_comparison": {"other": ID},
    "autolabel:job_detail": {"after": NUMBER, "partial": ENUM},
    "autolabel:job_estimate": {"profile": ID, "samples": NUMBER, "threshold": NUMBER, "prompt_version": ID},
}
# Every page is also sent these, all at once and one at a time: none may answer 5xx.
COMMON_QUERY = ["page", "sentence", "annotator", "seed", "mode", "status", "project", "batch", "topic", "model", "q",
                "severity", "show", "stale", "job", "partial", "compare", "format", "min_severity"]
QUERY_VALUES = ["abc", "-1", "99999999999999999999", "1e309", "x" * 3000, "\x00"]


def well_formed(w, probe):
    """The probe's body with its placeholders (``"turn"``, ``"triplet"``...) replaced by the world's ids."""
    ids = {"turn": w.turn.pk, "triplet": w.triplet.pk, "evidence": w.evidence.pk, "peer": w.peer.pk,
           "profile": w.profile.pk}
    body = {name: str(ids.get(value, value)) for name, value in probe.body.items()}
    if "sentence" in probe.fields and "sentence" not in body and probe.fields["sentence"] == ID:
        body["sentence"] = str(w.sentence.pk)
    return body
