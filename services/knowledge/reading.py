"""What the cues read from one memory: its statements (an attribute and the value it
says holds, or no longer holds) and the rest of a `Reading`, computed once by
`cues.read` and compared many times by `cues.compare`."""

from __future__ import annotations

from dataclasses import dataclass, field

from services.knowledge.reverts import Reverts
from services.knowledge.runtime_floors import Floors
from services.knowledge.setting_names import Bindings, Sources
from services.knowledge.tested_versions import Tested
from services.knowledge.value_moves import Move


@dataclass(frozen=True)
class Statement:
    attribute: str  # "timeout", "database", "runtime python", "unit mb"…
    value: str  # normalised, what holds now according to the memory
    old: bool = False  # the memory says this value no longer holds


@dataclass(frozen=True)
class Reading:
    """What the cues need from one memory (computed once, compared many times)."""

    id: str
    created_at: str
    names: frozenset[str]
    words: frozenset[str]  # subject words: no stopwords, values or attribute words
    file_refs: frozenset[str]
    statements: tuple[Statement, ...]
    change_wording: bool
    sentences: tuple[frozenset[str], ...]  # content words of each sentence
    negated: tuple[bool, ...]  # per sentence
    evidence: int = 0  # how much the note shows rather than recalls (see `evidence_of`)
    relays: bool = False  # worded as passing something on ("FYI", "heads-up", "afaik")
    spoken_change: bool = False  # worded as a change or correction ("bumped", "turns out")
    releases: frozenset[str] = frozenset()  # the releases it holds from ("since 5.1")
    said: frozenset[str] = frozenset()  # its values and subject words (`value_moves`)
    moves: tuple[Move, ...] = ()  # "from X to Y"
    environments: frozenset[str] = frozenset()  # "staging", "production" (`environments`)
    reverts: Reverts = field(default_factory=Reverts)  # what it says was reverted
    floors: Floors = frozenset()  # the runtime floors it states (`runtime_floors`)
    tested: Tested = frozenset()  # the versions it says CI tests (`tested_versions`)
    settings: Bindings = ()  # the settings its values are of (`setting_names`)
    sources: Sources = ()  # whether its values are defaults or the team's own (`whose`)

    def current(self, attribute: str) -> frozenset[str]:
        return frozenset(s.value for s in self.statements if s.attribute == attribute and not s.old)

    def old(self, attribute: str) -> frozenset[str]:
        return frozenset(s.value for s in self.statements if s.attribute == attribute and s.old)

    @property
    def attributes(self) -> frozenset[str]:
        return frozenset(s.attribute for s in self.statements)
