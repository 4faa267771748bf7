"""Which of two memories that disagree holds now.

The one that explicitly replaces the other's value; else the earlier when the later
only relays what it says ("FYI", "afaik": `evidence.relayed_over`); else the later when
it is worded as a change; else the one that shows more evidence (`evidence_of`: a pasted
traceback, a quoted file), and the later one when neither does.
"""

from __future__ import annotations

from services.knowledge.cues import Cues, later_of
from services.knowledge.evidence import relayed_over
from services.knowledge.reading import Reading

EVIDENCE_MARGIN = 1  # chosen leave-one-project-out on real-dev's labelled pairs (every fold: 1)


def holder(a: Reading, b: Reading, cues: Cues) -> str:
    """Which memory holds: the one that explicitly replaces the other's value; else the
    earlier when the later only relays what it says (`relayed_over`); else, when the
    later is worded as a change, the later; else (two notes that merely disagree) the
    one that shows more evidence (`evidence_of`, by EVIDENCE_MARGIN), and the later one
    when neither does."""
    if cues.replaces:
        return cues.replaces
    later = later_of(a, b)
    earlier = a if later is b else b
    if relayed_over(earlier, later):
        return earlier.id
    # a release the earlier does not name, given as where the later's statement holds
    # from ("3.18.0 came out with #9837: errors are a dict"), tells a change
    tells_change = later.spoken_change or bool(later.releases - earlier.said)
    if not tells_change and earlier.evidence - later.evidence >= EVIDENCE_MARGIN:
        return earlier.id
    return later.id
