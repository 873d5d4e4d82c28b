"""The 25 instruction types of IFEval's published registry: their kwargs and their checks.

Each check reproduces the verdict of IFEval's ``check_following`` for the
instruction (Zhou et al. 2023, ``instruction_following_eval/instructions.py``),
written here from those definitions; the scans it needs live in ``text``,
``sentences``, ``capitals`` and ``language``. A check sees one response
variant that is not blank (the caller rules blank ones out, as IFEval does).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, cast

from verl_rewards_ifeval import text as scan
from verl_rewards_ifeval.capitals import count_capital_words
from verl_rewards_ifeval.language import detect_language
from verl_rewards_ifeval.sentences import count_sentences

ParamKind = Literal["count", "int", "relation", "text", "words", "letter", "language", "index"]
Kwargs = Mapping[str, Any]
RELATIONS = ("less than", "at least")
CONSTRAINED_RESPONSES = ("My answer is yes.", "My answer is no.", "My answer is maybe.")


@dataclass(frozen=True)
class Param:
    """A kwarg an instruction needs, and what kind of value it takes."""

    name: str
    kind: ParamKind


@dataclass(frozen=True)
class InstructionType:
    """One IFEval instruction id: the kwargs it needs and its check."""

    id: str
    params: tuple[Param, ...]
    check: Callable[[str, Kwargs], bool]
    summary: str


def compare(actual: int, relation: str, threshold: int) -> bool:
    """IFEval's two relations: ``less than`` is ``<``, ``at least`` is ``>=``."""
    return actual < threshold if relation == "less than" else actual >= threshold


def _keywords_existence(text: str, kw: Kwargs) -> bool:
    return all(scan.contains_literal(text, word) for word in kw["keywords"])


def _keywords_frequency(text: str, kw: Kwargs) -> bool:
    return compare(scan.count_literal(text, kw["keyword"]), kw["relation"], kw["frequency"])


def _forbidden_words(text: str, kw: Kwargs) -> bool:
    return not any(scan.contains_literal(text, word, whole_word=True) for word in kw["forbidden_words"])


def _letter_frequency(text: str, kw: Kwargs) -> bool:
    letter = kw["letter"].strip().lower()
    # IFEval counts characters of text.lower(): a letter that strips or lowers to
    # other than one character is never counted.
    count = text.lower().count(letter) if len(letter) == 1 else 0
    return compare(count, kw["let_relation"], kw["let_frequency"])


def _response_language(text: str, kw: Kwargs) -> bool:
    language = detect_language(text)
    return language is None or language == kw["language"]  # undetectable counts as followed


def _number_sentences(text: str, kw: Kwargs) -> bool:
    return compare(count_sentences(text), kw["relation"], kw["num_sentences"])


def _number_paragraphs(text: str, kw: Kwargs) -> bool:
    paragraphs = scan.split_paragraph_dividers(text)
    count = len(paragraphs)
    for index, paragraph in enumerate(paragraphs):
        if not paragraph.strip():
            if 0 < index < len(paragraphs) - 1:
                return False  # an empty paragraph between two dividers
            count -= 1
    return bool(count == kw["num_paragraphs"])


def _number_words(text: str, kw: Kwargs) -> bool:
    return compare(scan.count_words(text), kw["relation"], kw["num_words"])


def _nth_paragraph_first_word(text: str, kw: Kwargs) -> bool:
    paragraphs = text.split("\n\n")
    count = sum(1 for paragraph in paragraphs if paragraph.strip())
    nth = kw["nth_paragraph"]
    # IFEval compares nth with the count of non-empty paragraphs but indexes the
    # list that still holds the empty ones.
    if nth > count or not paragraphs[nth - 1].strip():
        return False
    word = paragraphs[nth - 1].split()[0].lstrip("'").lstrip('"')
    first = ""
    for char in word:
        if char in ".,?!'\"":
            break
        first += char.lower()  # per character, as IFEval does (no final-sigma rule)
    return bool(count == kw["num_paragraphs"] and first == kw["first_word"].lower())


def _number_placeholders(text: str, kw: Kwargs) -> bool:
    return bool(scan.count_placeholders(text) >= kw["num_placeholders"])


_PPS = re.compile(r"p\.\s?p\.\s?s")
_PS = re.compile(r"p\.\s?s\.")


def _postscript(text: str, kw: Kwargs) -> bool:
    marker = kw["postscript_marker"]
    lowered = text.lower()
    if marker == "P.P.S":
        return _PPS.search(lowered) is not None
    if marker == "P.S.":
        return _PS.search(lowered) is not None
    return marker.lower() in lowered


def _number_bullet_lists(text: str, kw: Kwargs) -> bool:
    return bool(scan.count_bullets(text) == kw["num_bullets"])


def _constrained_response(text: str, kw: Kwargs) -> bool:
    stripped = text.strip()
    return any(option in stripped for option in CONSTRAINED_RESPONSES)


def _number_highlighted_sections(text: str, kw: Kwargs) -> bool:
    return bool(sum(1 for inner in scan.highlights(text) if inner.strip()) >= kw["num_highlights"])


def _multiple_sections(text: str, kw: Kwargs) -> bool:
    return bool(scan.count_sections(text, kw["section_spliter"]) >= kw["num_sections"])


def _json_format(text: str, kw: Kwargs) -> bool:
    body = text.strip()
    for fence in ("```json", "```Json", "```JSON", "```"):
        body = body.removeprefix(fence)
    body = body.removesuffix("```").strip()
    try:
        json.loads(body)
    except (ValueError, RecursionError):  # deep nesting: IFEval would crash, here it is not JSON
        return False
    return True


def _title(text: str, kw: Kwargs) -> bool:
    return any(title.lstrip("<").rstrip(">").strip() for title in scan.titles(text))


def _two_responses(text: str, kw: Kwargs) -> bool:
    parts = text.split("******")
    answers = []
    for index, part in enumerate(parts):
        if part.strip():
            answers.append(part.strip())
        elif 0 < index < len(parts) - 1:
            return False  # an empty response between two separators
    return len(answers) == 2 and answers[0] != answers[1]


def _repeat_prompt(text: str, kw: Kwargs) -> bool:
    return text.strip().lower().startswith(kw["prompt_to_repeat"].strip().lower())


def _end_checker(text: str, kw: Kwargs) -> bool:
    return text.strip().strip('"').lower().endswith(kw["end_phrase"].strip().lower())


def _capital_word_frequency(text: str, kw: Kwargs) -> bool:
    return compare(count_capital_words(text), kw["capital_relation"], kw["capital_frequency"])


def _english_capital(text: str, kw: Kwargs) -> bool:
    return text.isupper() and detect_language(text) in (None, "en")


def _english_lowercase(text: str, kw: Kwargs) -> bool:
    return text.islower() and detect_language(text) in (None, "en")


def _no_comma(text: str, kw: Kwargs) -> bool:
    return "," not in text


def _quotation(text: str, kw: Kwargs) -> bool:
    stripped = text.strip()
    return len(stripped) > 1 and stripped[0] == '"' and stripped[-1] == '"'


def _params(*spec: str) -> tuple[Param, ...]:
    """``"name:kind"`` strings as params."""
    return tuple(Param(name, cast(ParamKind, kind)) for name, kind in (item.split(":") for item in spec))


_TYPES = (
    InstructionType("keywords:existence", _params("keywords:words"), _keywords_existence,
                    "every keyword occurs (case-insensitive substring)"),
    InstructionType("keywords:frequency", _params("keyword:text", "frequency:count", "relation:relation"),
                    _keywords_frequency, "the keyword's occurrences (case-insensitive) meet the relation"),
    InstructionType("keywords:forbidden_words", _params("forbidden_words:words"), _forbidden_words,
                    "no forbidden word occurs as a whole word (case-insensitive)"),
    InstructionType("keywords:letter_frequency",
                    _params("letter:letter", "let_frequency:count", "let_relation:relation"),
                    _letter_frequency, "the letter's count (case-insensitive) meets the relation"),
    InstructionType("language:response_language", _params("language:language"), _response_language,
                    "langdetect names the language (undetectable text passes)"),
    InstructionType("length_constraints:number_sentences",
                    _params("num_sentences:count", "relation:relation"), _number_sentences,
                    "the sentence count meets the relation"),
    InstructionType("length_constraints:number_paragraphs", _params("num_paragraphs:count"),
                    _number_paragraphs, "exactly N paragraphs separated by ***"),
    InstructionType("length_constraints:number_words", _params("num_words:count", "relation:relation"),
                    _number_words, "the count of \\w+ runs meets the relation"),
    InstructionType("length_constraints:nth_paragraph_first_word",
                    _params("num_paragraphs:count", "nth_paragraph:index", "first_word:text"),
                    _nth_paragraph_first_word,
                    "exactly N paragraphs separated by blank lines, paragraph n starting with the word"),
    InstructionType("detectable_content:number_placeholders", _params("num_placeholders:count"),
                    _number_placeholders, "at least N [placeholders]"),
    InstructionType("detectable_content:postscript", _params("postscript_marker:text"), _postscript,
                    "a postscript marker (P.S. / P.P.S, case-insensitive)"),
    InstructionType("detectable_format:number_bullet_lists", _params("num_bullets:count"),
                    _number_bullet_lists, "exactly N lines starting with * or -"),
    InstructionType("detectable_format:constrained_response", (), _constrained_response,
                    "contains 'My answer is yes.', '... no.' or '... maybe.'"),
    InstructionType("detectable_format:number_highlighted_sections", _params("num_highlights:count"),
                    _number_highlighted_sections, "at least N non-empty *highlighted* or **highlighted** spans"),
    InstructionType("detectable_format:multiple_sections",
                    _params("section_spliter:text", "num_sections:count"), _multiple_sections,
                    "at least N 'SPLITTER <number>' section marks"),
    InstructionType("detectable_format:json_format", (), _json_format,
                    "the response (``` fences allowed) parses as JSON"),
    InstructionType("detectable_format:title", (), _title, "a non-empty <<title>> on one line"),
    InstructionType("combination:two_responses", (), _two_responses,
                    "two different non-empty responses separated by ******"),
    InstructionType("combination:repeat_prompt", _params("prompt_to_repeat:text"), _repeat_prompt,
                    "starts with the prompt to repeat (case-insensitive)"),
    InstructionType("startend:end_checker", _params("end_phrase:text"), _end_checker,
                    "ends with the phrase (case-insensitive, closing quotes ignored)"),
    InstructionType("change_case:capital_word_frequency",
                    _params("capital_frequency:int", "capital_relation:relation"), _capital_word_frequency,
                    "the count of all-capital words (nltk's word tokens) meets the relation"),
    InstructionType("change_case:english_capital", (), _english_capital,
                    "all cased letters uppercase, and English (langdetect)"),
    InstructionType("change_case:english_lowercase", (), _english_lowercase,
                    "all cased letters lowercase, and English (langdetect)"),
    InstructionType("punctuation:no_comma", (), _no_comma, "no ','"),
    InstructionType("startend:quotation", (), _quotation, "wrapped in double quotes"),
)

REGISTRY: Mapping[str, InstructionType] = {kind.id: kind for kind in _TYPES}
