"""Human checks in a real browser (headless Chromium): a lead draws 3 turns at random on the job's checks page;
the next turn an annotator starts is one of them, the first of the draw."""

import re

import pytest
from playwright.sync_api import expect

from annotator.domain.vocabulary import Role
from annotator.models import Assignment, TurnDraw
from tests.conftest import start_from_queue
from tests.factories import member
from tests.test_accessibility_browser import AXE, SERIOUS
from tests.factories_draws import SURE, finished_job
from tests.factories_workspace import NO_PASSWORD, annotators, project_with_turns

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# The machine running the suite may be busy: wait for the page generously (never a timing assertion).
expect.set_options(timeout=30_000)


def test_a_lead_draws_three_turns_at_random_and_the_annotators_next_turn_is_the_first_drawn(page_for):
    project, turns = project_with_turns(8)
    job = finished_job(project, {turn: SURE for turn in turns})
    lead = member(project, Role.LEAD, password=NO_PASSWORD)
    annotator, = annotators(project, 1)

    page = page_for(lead)
    page.set_default_timeout(30_000)
    page.goto(f"/p/{project.slug}/autolabel/jobs/{job.pk}/")
    page.locator("#job-checks-link").click()
    page.wait_for_url(re.compile(rf"/autolabel/jobs/{job.pk}/checks/$"))
    page.get_by_label("At random (supports bias-corrected estimates)").check()
    page.get_by_label("Number of turns").fill("3")
    page.locator("#draw-button").click()
    expect(page.locator("#draws-table tbody tr")).to_have_count(1)
    expect(page.get_by_text(re.compile(r"Draw \d+: 3 turns drawn"))).to_be_visible()
    # The checks page with its draw has no serious or critical accessibility violation (loaded again: the
    # message list of base.html after a redirect is not this page's).
    page.reload()
    expect(page.locator("#draws-table tbody tr")).to_have_count(1)
    page.evaluate(AXE)
    assert page.evaluate(SERIOUS) == []

    draw = TurnDraw.objects.get()
    first_drawn = draw.drawn_turns.get(position=0).turn_id
    assert draw.strategy == "random" and draw.seed is not None and draw.drawn_turns.count() == 3

    work = page_for(annotator)
    work.set_default_timeout(30_000)
    start_from_queue(work, project)
    expect(work.locator("#decision-panel")).to_be_visible()
    assignment_id = int(re.search(r"/a/(\d+)/", work.url).group(1))
    assert Assignment.objects.get(pk=assignment_id).turn_id == first_drawn
