"""States a question asks its rows to be in: "cancelled orders", "tickets that are still
open", "unpaid invoices".

A state word is one of a closed list of adjectives and participles that name a status a
row has (:data:`STATES`), read where it describes the rows: before a noun ("cancelled
orders") or after a form of "to be" ("orders that were cancelled"). Production schemas
hold such a state as a value (``status = 'cancelled'``), a flag (``is_refunded``) or a date
(``cancelled_at``), whose names share a stem with the word; :data:`STATES` gives each
word the stems that can answer it ("open" is answered by ``closed_at IS NULL`` too).
:func:`stef.align.states.check_states` reports a state that nothing of the SQL names.

"Active" and "inactive" are left out: production SQL reads them from activity as often as
from a status ("daily active users" counts users with an event; "active subscriptions" have
no end date yet), so a query without the word says nothing. Read from the question only;
an enrichment that defines the word ("pending refers to status = 'P'") or restates the
question without it is :func:`stef.align.states.check_states`'s to read. Deterministic and
schema-free.

>>> [(s.word, s.stems) for s in state_words("How many cancelled orders were refunded?")]
[('cancelled', ('cancel',)), ('refunded', ('refund',))]
>>> [s.word for s in state_words("List tickets that are still open.")]
['open']
>>> state_words("How many deals were closed last quarter?")
()
>>> state_words("Which answers are most accepted?"), state_words("loans approved in 1997")
((), ())
>>> [(s.word, s.excluded) for s in state_words("Revenue excluding refunded orders")]
[('refunded', True)]
>>> state_words("Between 1/1/1995 and 12/31/1997, how many loans were approved?")
()
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from stef.nl import lexicon as lx
from stef.nl.words import TEXT_CACHE_SIZE

#: Each state word and the stems (lower case) of the names and values that can hold it.
STATES: dict[str, tuple[str, ...]] = {
    "open": ("open", "clos"),
    "closed": ("clos", "open"),
    "pending": ("pend",),
    "cancelled": ("cancel",),
    "canceled": ("cancel",),
    "completed": ("complet", "finish", "done"),
    "incomplete": ("complet",),
    "failed": ("fail", "success", "error"),
    "successful": ("success", "fail"),
    "unpaid": ("paid", "pay"),
    "refunded": ("refund",),
    "shipped": ("ship",),
    "unshipped": ("ship",),
    "delivered": ("deliver",),
    "undelivered": ("deliver",),
    "approved": ("approv",),
    "unapproved": ("approv",),
    "rejected": ("reject",),
    "declined": ("declin",),
    "expired": ("expir",),
    "suspended": ("suspend",),
    "archived": ("archiv",),
    "deleted": ("delet",),
    "published": ("publish", "draft"),
    "unpublished": ("publish", "draft"),
    "enabled": ("enabl", "disabl"),
    "disabled": ("disabl", "enabl"),
    "verified": ("verif",),
    "unverified": ("verif",),
    "resolved": ("resolv",),
    "unresolved": ("resolv",),
    "overdue": ("due",),
    "churned": ("churn",),
    "banned": ("ban",),
    "blocked": ("block",),
    "flagged": ("flag",),
    "accepted": ("accept",),
    "answered": ("answer",),
    "unanswered": ("answer",),
    "discontinued": ("discontinu",),
    "deceased": ("deceas", "death", "dead", "die"),
    "retired": ("retir",),
    "male": ("male", "gender", "sex"),  # "male members": sex = 'M' names its column
    "female": ("female", "gender", "sex"),
}

#: Words after which a state word says what the rows are ("that are still open").
_BE = lx._words("is are was were be been being remain remains remained still currently now")
#: Words before a state word that make it no state ("the most recently banned" ranks
#: a date, "first approved" is a date).
_NOT_AFTER = lx._words(
    """most least more less highest lowest best worst well poorly recently newly first last
    latest earliest never how"""
)
_HAVE = lx._words("have has had")
#: The start of a count after a verb ("published more than 5", "shipped 10", "sold over").
_COUNTED_NEXT = re.compile(r"\d|(?:more|less|fewer|over|under|at|above|below|exactly|no)$")
#: Words after "were closed" that say when it happened ("deals that were closed last
#: quarter"): an event the SQL may date by any column (``won_at``), not a state to name.
_WHEN = lx._words(
    "last this next in on during since before after between yesterday today within over past"
)
#: Words after an attributive state word that show it is no noun's state: a preposition or
#: a time ("approved in 1997", "approved loan date"), and the times one word further on.
_TIMES = lx._words("date dates time times day days year years month months")
_NOT_BEFORE = _TIMES | lx._words(
    """in on at by for from to with of and or than as since after before during within
    between the a an this that these those when"""
)

#: A date or a period a question names anywhere: a year, a written date, a relative period.
_DATED = re.compile(
    r"\b(?:19|20)\d{2}\b|\b\d{1,2}/\d{1,2}/\d{2,4}\b|\byesterday\b|\btoday\b"
    r"|\b(?:last|this|past|previous)\s+(?:\d+\s+)?(?:day|week|month|quarter|year)s?\b"
)
_WORD = re.compile(r"[a-z]+")
#: Any state word, for the one search that rules most questions out.
_ANY_STATE = re.compile(rf"\b(?:{lx.alternation(STATES)})\b")


#: Words before a state word that exclude it ("excluding refunded orders", "non-cancelled
#: orders", "orders that are not cancelled"), and those that may stand between ("excluding
#: all cancelled orders").
_EXCLUDING = lx._words("excluding exclude excludes except without non not ignoring")
_BETWEEN = lx._words("all any the")


@dataclass(frozen=True)
class StateWord:
    """A state the question asks for: its word, the stems that answer it, and whether the
    question keeps its rows out (``excluded``: "excluding refunded orders")."""

    word: str
    stems: tuple[str, ...]
    excluded: bool = False


@lru_cache(maxsize=TEXT_CACHE_SIZE)
def state_words(question: str) -> tuple[StateWord, ...]:
    """The state words of ``question`` that describe its rows (see the module doc), each
    word once, in reading order.

    >>> [s.word for s in state_words("Show open and closed tickets of banned users.")]
    ['open', 'closed', 'banned']
    >>> state_words("Who was the most recently banned?"), state_words("the approved loan date")
    ((), ())
    >>> state_words("Which authors have published more than 5 books?")
    ()
    """
    low = question.casefold()
    if _ANY_STATE.search(low) is None:
        return ()
    toks = [(m.group(0), m.start()) for m in _WORD.finditer(low)]
    found: list[StateWord] = []
    seen: set[str] = set()
    for i, (word, start) in enumerate(toks):
        stems = STATES.get(word)
        if stems is None or word in seen:
            continue
        before = toks[i - 1][0] if i else ""
        after = [t for t, _ in toks[i + 1 : i + 3]]
        excluded = _excluded(toks, i)
        if before == "not" and i > 1 and toks[i - 2][0] in _BE:
            before = toks[i - 2][0]  # "orders that are not cancelled"
        if before in _NOT_AFTER or (before in _HAVE and after and _COUNTED_NEXT.match(after[0])):
            continue  # "authors who have published more than 5 books": a count of a verb
        if before in _BE:  # "that were cancelled", unless when follows ("… last quarter")
            gap = low[start + len(word) : toks[i + 1][1]] if i + 1 < len(toks) else ""
            described = gap.strip() != "" or not _WHEN.intersection(after)
            # or the question dates it elsewhere ("Between 1995 and 1997, how many loans
            # were approved?"): an event of that period, which the SQL may date by any column
            described = described and (excluded or _DATED.search(low) is None)
        else:  # "cancelled orders", not "approved in 1997" or "approved loan date"
            described = (
                bool(after)
                and after[0] not in _NOT_BEFORE
                and not (len(after) > 1 and after[1] in _TIMES)
            )
        # "open and closed tickets": the list's noun follows its last word
        listed = bool(after) and after[0] in ("and", "or") and _next_state(toks, i + 2)
        if not described and not listed:
            continue
        seen.add(word)
        found.append(StateWord(word, stems, excluded))
    return tuple(found)


def _excluded(toks: list[tuple[str, int]], i: int) -> bool:
    """Does an excluding word (:data:`_EXCLUDING`) stand just before the word at ``i``, one
    of "all", "any", "the" at most between?

    >>> t = [(m.group(0), m.start()) for m in _WORD.finditer("excluding all refunded orders")]
    >>> _excluded(t, 2), _excluded(t, 3)
    (True, False)
    """
    j = i - 1
    if j >= 0 and toks[j][0] in _BETWEEN:
        j -= 1
    return j >= 0 and toks[j][0] in _EXCLUDING


def _next_state(toks: list[tuple[str, int]], j: int) -> bool:
    """Is the word at ``j`` (after "and"/"or") another state word?"""
    return j < len(toks) and toks[j][0] in STATES


#: Words that restrict rows to days of the week ("on weekends", "orders on Mondays").
WEEKDAY_WORDS = lx._words(
    """weekend weekends weekday weekdays monday mondays tuesday tuesdays wednesday wednesdays
    thursday thursdays friday fridays saturday saturdays sunday sundays"""
)


@lru_cache(maxsize=TEXT_CACHE_SIZE)
def weekday_words(question: str) -> tuple[str, ...]:
    """The day-of-week words of ``question``, in reading order, each once.

    >>> weekday_words("How many orders were placed on weekends or on Mondays?")
    ('weekends', 'mondays')
    >>> weekday_words("Orders by week"), weekday_words("Orders on Black Friday 2023")
    ((), ())
    >>> weekday_words("Which day of the week has the most orders?")
    ('day of the week',)
    """
    low = question.casefold()
    if "day" not in low and "weekend" not in low:  # in every word of WEEKDAY_WORDS
        return ()
    found: list[str] = [m.group(0) for m in _DAY_OF_WEEK.finditer(low)][:1]
    prev = ""
    for m in _CASED_WORD.finditer(question):
        word, before, prev = m.group(0).casefold(), prev, m.group(0)
        if word not in WEEKDAY_WORDS or word in found:
            continue
        if before[:1].isupper() and before.casefold() not in _DAY_LEADS:
            continue  # "Black Friday", "Cyber Monday": a day in a name
        found.append(word)
    return tuple(found)


_CASED_WORD = re.compile(r"[A-Za-z]+")
#: "which day of the week has the most orders": the day of the week asked for as a key.
_DAY_OF_WEEK = re.compile(r"\bdays?\s+of\s+(?:the\s+)?week\b")
#: Capitalised words a day name may follow without being part of a name ("On Mondays").
_DAY_LEADS = lx._words("on for in every each by at of the during")


#: A verb the question negates: "drivers who did not finish", "orders that have not been
#: delivered yet", "users who never verified their email".
_NEGATED_VERB = re.compile(
    r"\b(?:did|does|do|have|has|had)(?:\s+not|n't)\s+(?:yet\s+)?(?:been\s+)?([a-z]{3,})\b"
    r"|\bnever\s+(?:been\s+)?([a-z]{3,})\b"
)
#: Quoted text, whose words are a value's, not the question's (a double-quoted span, or a
#: single-quoted one that no letter touches: "don't" is no quote).
_QUOTED = re.compile(r"\"[^\"]*\"|“[^”]*”|(?<![a-z])'[^']*'(?![a-z])")
#: Words after "did not", "have not" or "never" that are no verb of the rows' event.
_NOT_VERBS = lx._words(
    """have has had any all the a an more less than only one two yet been be being exist
    exists existed any more much many some appear appears appeared seem seems include
    includes included contain contains contained know knows known"""
)


@lru_cache(maxsize=TEXT_CACHE_SIZE)
def negated_verbs(question: str) -> tuple[str, ...]:
    """The verbs ``question`` negates as something its rows did not do, each once, in
    reading order (:func:`stef.align.states.check_states` reports SQL that keeps the rows
    that did).

    >>> negated_verbs("How many drivers did not finish the race?")
    ('finish',)
    >>> negated_verbs("Orders that haven't been delivered yet; users who never verified")
    ('delivered', 'verified')
    >>> negated_verbs("Customers who did not have any orders"), negated_verbs("Open tickets")
    ((), ())
    >>> negated_verbs('Who edited the post "Correlation does not mean causation"?')
    ()
    """
    low = question.casefold().replace("’", "'")
    if "not" not in low and "n't" not in low and "never" not in low:
        return ()
    low = _QUOTED.sub(" ", low)  # a title's words: 'Correlation does not mean causation'
    found: list[str] = []
    for m in _NEGATED_VERB.finditer(low):
        verb = m.group(1) or m.group(2)
        if verb not in _NOT_VERBS and verb not in found:
            found.append(verb)
    return tuple(found)
