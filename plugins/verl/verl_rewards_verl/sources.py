"""Which of verl's scorers a ``data_source`` selects: verl 0.9.1's ``default_compute_score`` table."""

from __future__ import annotations

from typing import Literal

Branch = Literal["gsm8k", "math", "math_dapo", "prime_math", "code", "geo3k", "search_r1"]

# In verl's order; the sets are disjoint, and only math_dapo also takes a prefix.
SOURCES: dict[Branch, tuple[str, ...]] = {
    "gsm8k": ("openai/gsm8k",),
    "math": ("lighteval/MATH", "DigitalLearningGmbH/MATH-lighteval", "HuggingFaceH4/MATH-500"),
    "math_dapo": ("math_dapo", "math", "math_dapo_reasoning"),
    "prime_math": (
        "numina_aops_forum",
        "numina_synthetic_math",
        "numina_amc_aime",
        "numina_synthetic_amc",
        "numina_cn_k12",
        "numina_olympiads",
    ),
    "code": ("codecontests", "apps", "codeforces", "taco"),
    "geo3k": ("hiyouga/geometry3k",),
    "search_r1": (
        "searchR1_nq",
        "searchR1_triviaqa",
        "searchR1_popqa",
        "searchR1_hotpotqa",
        "searchR1_2wikimultihopqa",
        "searchR1_musique",
        "searchR1_bamboogle",
    ),
}
DAPO_PREFIX = "aime"
_BY_SOURCE = {source: branch for branch, sources in SOURCES.items() for source in sources}


class UnknownDataSourceError(ValueError, NotImplementedError):
    """A ``data_source`` verl's table has no scorer for (a ``NotImplementedError`` too, as verl raises)."""

    def __init__(self, data_source: object) -> None:
        self.data_source = data_source
        super().__init__(
            f"verl_default has no scorer for data_source {data_source!r:.80} (verl 0.9.1's default_compute_score "
            f"knows: {_listed()}); route other sources to another reward "
            "(reward.rewards + reward.route)"
        )


def known_sources() -> list[str]:
    """Every data source verl's table names, and the ``aime*`` prefix."""
    return [*_BY_SOURCE, f"{DAPO_PREFIX}* (any data_source starting with '{DAPO_PREFIX}')"]


def _listed() -> str:
    """:func:`known_sources`, families written once (``numina_{aops_forum,...}``), so the
    list fits a sample's error whole."""
    items: list[str] = []
    for sources in SOURCES.values():
        family = _family(sources[:-1]) if len(sources) > 3 else None
        items += [family, sources[-1]] if family else list(sources)
    return ", ".join([*items, known_sources()[-1]])


def _family(sources: tuple[str, ...]) -> str | None:
    """``prefix_{a,b}`` for names sharing a prefix up to an underscore, else None."""
    prefix = sources[0][: sources[0].find("_") + 1]
    if not prefix or not all(s.startswith(prefix) for s in sources):
        return None
    return f"{prefix}{{{','.join(s[len(prefix):] for s in sources)}}}"


def branch_of(data_source: object) -> Branch:
    """The scorer ``data_source`` selects; raises :class:`UnknownDataSourceError` when none does."""
    if isinstance(data_source, str):
        branch = _BY_SOURCE.get(data_source)
        if branch is not None:
            return branch
        if data_source.startswith(DAPO_PREFIX):
            return "math_dapo"
    raise UnknownDataSourceError(data_source)
