"""The display rule, as a pure function, under property tests."""

from hypothesis import given
from hypothesis import strategies as st

from grounding.choices import (
    DisplayState,
    RecheckState,
    RecordState,
    ResolutionState,
    Verdict,
)
from grounding.display import AssessmentFacts, derive_display

assessments = st.lists(
    st.builds(
        AssessmentFacts,
        assessment_ref=st.text(min_size=1, max_size=8),
        verdict=st.sampled_from(Verdict.values),
        authorized=st.booleans(),
        current=st.booleans(),
        selection_basis_ref=st.sampled_from(["", "urn:policy:select@1"]),
    ),
    max_size=6,
)
states = dict(
    record_state=st.sampled_from(RecordState.values),
    recheck_state=st.sampled_from(RecheckState.values),
    resolution_state=st.sampled_from(ResolutionState.values),
    source_restricted=st.booleans(),
    assessments=assessments,
)


@given(**states)
def test_visible_needs_an_authorized_current_assessment(**facts):
    display = derive_display(**facts)
    usable = [a for a in facts["assessments"] if a.authorized and a.current]
    if display.display_state == DisplayState.VISIBLE:
        assert usable
        assert display.displayed_verdict in {a.verdict for a in usable}
        assert display.selected_assessment_ref in {a.assessment_ref for a in usable}
    else:
        assert display.displayed_verdict == ""


@given(**states)
def test_withdrawn_restricted_unavailable_and_stale_are_never_visible(**facts):
    display = derive_display(**facts)
    if facts["record_state"] in (RecordState.WITHDRAWN, RecordState.DISPOSED):
        assert display.display_state == DisplayState.WITHDRAWN
    elif facts["source_restricted"] or facts["resolution_state"] == ResolutionState.RESTRICTED:
        assert display.display_state == DisplayState.RESTRICTED
    elif facts["resolution_state"] in (ResolutionState.UNAVAILABLE, ResolutionState.STALE):
        assert display.display_state == DisplayState.UNAVAILABLE
    elif facts["recheck_state"] in (RecheckState.STALE, RecheckState.PENDING_REVIEW):
        assert display.display_state == DisplayState.UNASSESSED


@given(**states)
def test_disagreement_without_selection_is_disputed(**facts):
    display = derive_display(**facts)
    usable = [a for a in facts["assessments"] if a.authorized and a.current]
    if display.display_state == DisplayState.DISPUTED:
        assert len({a.verdict for a in usable}) > 1
        assert not any(a.selection_basis_ref for a in usable)
        assert set(display.competing_assessment_refs) == {a.assessment_ref for a in usable}


@given(
    verdicts=st.lists(st.sampled_from(Verdict.values), min_size=1, max_size=5),
)
def test_agreeing_current_assessments_show_their_common_verdict(verdicts):
    facts = [AssessmentFacts(f"a{i}", verdicts[0], True, True) for i in range(len(verdicts))]
    display = derive_display(
        record_state=RecordState.CANDIDATE,
        recheck_state=RecheckState.CURRENT,
        resolution_state=ResolutionState.RESOLVED,
        source_restricted=False,
        assessments=facts,
    )
    assert (display.display_state, display.displayed_verdict) == (
        DisplayState.VISIBLE,
        verdicts[0],
    )


def test_no_assessment_is_unassessed_even_when_the_anchor_resolves():
    display = derive_display(
        record_state=RecordState.CANDIDATE,
        recheck_state=RecheckState.CURRENT,
        resolution_state=ResolutionState.RESOLVED,
        source_restricted=False,
        assessments=[],
    )
    assert display.display_state == DisplayState.UNASSESSED
