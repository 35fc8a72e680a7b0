"""The vocabulary of the deterministic NL extractor (:mod:`stef.nl.spec`).

Plain data, no logic: cue words for aggregations, superlatives, comparatives, dates and
the words that must never be read as values (every entry lower-case), then the regex
patterns compiled from them, whose group names :mod:`stef.nl.spec` reads.

>>> NUMBER_WORDS["twelve"], SUPERLATIVES["fewest"], "phone" in NUMBER_LABELS
(12, 'asc', True)
"""

from __future__ import annotations

import re
from collections.abc import Iterable


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


def _list(text: str, sep: str | None = None) -> list[str]:
    return text.split(sep)


#: Number words -> value ("the three largest", "more than five").
NUMBER_WORDS: dict[str, int] = {
    w: i
    for i, w in enumerate(
        _list(
            "zero one two three four five six seven eight nine ten eleven twelve thirteen "
            "fourteen fifteen sixteen seventeen eighteen nineteen twenty"
        )
    )
} | {"thirty": 30, "forty": 40, "fifty": 50, "hundred": 100, "thousand": 1000}

#: Number words as a set, for a cheap "does the text hold a number" test.
NUMBER_WORD_SET = frozenset(NUMBER_WORDS) | {"once", "twice", "thrice"}  # "more than once"

#: Ordinals -> position ("the second highest" -> offset 1).
ORDINALS: dict[str, int] = {
    w: i + 2
    for i, w in enumerate(_list("second third fourth fifth sixth seventh eighth ninth tenth"))
}

#: Month names and abbreviations -> month number.
MONTHS: dict[str, int] = (
    {
        m: i + 1
        for i, m in enumerate(
            _list(
                "january february march april may june july august september october november "
                "december"
            )
        )
    }
    | {a: i + 1 for i, a in enumerate(_list("jan feb mar apr may jun jul aug sep oct nov dec"))}
    | {"sept": 9}
)

#: Month names and abbreviations as a set.
MONTH_WORDS = frozenset(MONTHS)

#: Superlatives -> sort direction of the thing they rank by.
SUPERLATIVES: dict[str, str] = dict.fromkeys(
    _list(
        "highest largest greatest biggest most top longest tallest heaviest maximum latest "
        "newest youngest"
    ),
    "desc",
) | dict.fromkeys(
    _list("lowest smallest least fewest shortest lightest cheapest minimum earliest oldest"),
    "asc",
)

#: Words that trigger the superlative step.
SUPERLATIVE_WORDS = frozenset(SUPERLATIVES) | _words("first last recent")

#: Words that trigger the aggregation step (rules' term_functions trigger it too).
AGGREGATE_WORDS = _words(
    "how total number no count sum summed average avg mean maximum max minimum min"
)

#: Words that trigger the DISTINCT step.
DISTINCT_WORDS = _words("different unique distinct kind kinds type types sort sorts")
#: Words that trigger the one-letter pattern step ("starting with c", "containing the letter t").
INITIAL_WORDS = _words(
    "start starts starting begin begins beginning end ends ending contain contains containing"
)

#: Words that make an "X = Y" clause a condition, not a definition ("... where country = 'DE'").
CONDITION_WORDS = _words("where whose having")

#: Imperatives that open a request: "Count visitors where country = 'DE'" is no definition.
IMPERATIVES = _words(
    "list show display enumerate give find provide count calculate compute return get select "
    "retrieve fetch"
)

#: Words that trigger the GROUP BY step.
GROUP_WORDS = _words("group grouped broken split per each every by")

#: Words that trigger the explicit-ordering step.
ORDER_WORDS = _words("by order alphabetically from")

#: Units of time.
TIME_UNITS = _words("year years month months week weeks day days quarter quarters")

#: Ordinal words of quarters ("the first quarter of 2023").
QUARTER_ORDINALS = {"first": 1, "second": 2, "third": 3, "fourth": 4}

#: Words of relative dates ("last year", "today", "YTD").
RELATIVE_DATE_WORDS = _words("last this current previous past next prior recent today yesterday")
RELATIVE_DATE_WORDS |= {"ytd", "mtd", "qtd", "wtd"}

#: Words before "N most"/"N highest" that make N a top-k ("the 3 most", not "room 111 most").
TOPK_LEADS = _words(
    "the a an all any this that these those its their his her top what are with of by"
)
TOPK_LEADS |= _words("list show name display enumerate which give find provide")

#: Endings of adjectives that a superlative ranks by ("the most expensive").
ADJECTIVE_SUFFIXES = ("ive", "ous", "ful", "able", "ible", "ic", "ent", "ant")

#: Superlatives that rank by a date ("the most recent order").
TEMPORAL_SUPERLATIVES = _words("latest newest earliest oldest youngest recent")

#: Words after "the first"/"the last" that make it no ranking ("the first name").
NOT_RANKED = _words("""name names and or half quarter time letter letters character characters
    word words day days year month week season""")

#: Words after "most"/"least" that rank by frequency ("the most common genre").
FREQUENCY_WORDS = _words("common popular frequent frequently often used")

#: Ratio nouns; a ratio is asked for when one follows a function word ("the percentage of").
RATIO_WORDS = _words("percentage percentages percent ratio ratios proportion fraction share rate")

#: Words that may precede a ratio noun when the question asks to compute it.
RATIO_LEADS = _words("""the a an what in as of and calculate compute find give show list state
    tell provide return get determine identify how""")

#: Words one of which NEGATION_ANY needs, unless the text has "n't".
#: A word that ends the request's noun phrase (the phrase's qualifiers start here).
REQUEST_STOPS = _words(
    """of for who whom whose that which where when in with from by on at among if having has
    have had than ordered sorted order sort grouped per to as whether was were is are be did
    do does and but not into under over between during before after since until within
    without along across about like each every all this these those there here it they its
    their his her them how what why can could would should will shall must may might used
    made taught bought sold held won written given taken done except excluding besides today
    yesterday""")

#: A request item's last word that says little alone ("phone numbers", "city location"):
#: any word of the item may then be what an output is named after.
REQUEST_GENERIC_HEADS = _words(
    "number numbers location locations value values amount amounts detail details info code codes "
    "address addresses score scores")

#: Words that say the item is computed (an aggregate, a ratio, an extreme).
REQUEST_COMPUTED_WORDS = _words(
    """number count total sum average mean avg maximum minimum max min percentage percent
    proportion ratio rate share difference highest lowest largest smallest biggest most
    least oldest youngest latest earliest longest shortest greatest fewest top bottom
    amount many much counts totals sums averages statistics stats median"""
)

#: Nouns that name an amount an aggregate computes, not rows to list ("What were sales in
#: 2023?", "Show the Q3 revenue").
MEASURE_NOUNS = _words(
    "sales revenues earnings profits costs expenses losses savings proceeds revenue income "
    "profit spend spending turnover gmv arr mrr"
)
#: What makes "how many times" a ratio ("how many times more", "… times larger than …"),
#: not a count of occurrences ("how many times has the student visited Subway?").
TIMES_RATIO = re.compile(
    r"\s+(?:[a-z]+\s+){0,3}?(?:more|less|fewer|larger|bigger|greater|higher|lower|smaller"
    r"|longer|shorter|as|than)\b"
)
#: Nouns of a figure computed per group: an amount, or a ratio ("churn rate per plan").
FIGURE_NOUNS = MEASURE_NOUNS | RATIO_WORDS

#: Words with no say in what an item is.
REQUEST_FILLERS = _words(
    """the a an all different distinct unique full complete respective corresponding only
    also both entire whole any some various overall detailed exact our my your associated
    related individual q1 q2 q3 q4 h1 h2 ytd mtd qtd daily weekly monthly quarterly yearly
    annual"""
)

#: Items that name no particular output ("the details", "the list of …", "include
#: subtotals": rows of the report, not a column): not checked.
REQUEST_VAGUE = _words(
    """list details detail information info record records data everything all result results
    row rows entry entries one ones separately subtotal subtotals breakdown overview split"""
)

#: Conjunctions and prepositions the filler list lacks: grammar, never a schema term (and
#: "full", as in "full name": every part of the name, whatever columns hold it).
CONNECTIVES = _words(
    "but yet although though however whereas along across against toward towards upon via "
    "according based corresponding own whether still ever equal equals equally never except "
    "excluding none nor full"
)

#: Verbs that frame a request or relate its parts ("state the name", "which club does she
#: belong to", "held in"), never what is asked for.
REQUEST_VERBS = _words(
    "state indicate identify describe mention mentioned write include includes including "
    "contain contains containing belong belongs belonging take takes took taken hold holds "
    "held use uses used using"
)

#: Irregular past participles ("taught", "born"): verbs like the regular ``-ed`` forms the
#: term check already skips.
IRREGULAR_PARTICIPLES = _words(
    "born borne bought built chosen done drawn driven drunk eaten fallen felt fought found "
    "given gone grown heard hidden kept known laid led left lent lost meant met paid put "
    "read ridden risen run said seen sent shot shown sold spent spoken stood stolen sung "
    "taught thought told understood won worn written"
)

#: Question words that name no schema term (function words, request verbs, quantities).
QUESTION_FILLER_WORDS = (
    _words(
        """a an the of in on at to for from by with and or not no is are was were be been being
    do does did have has had what which who whom whose where when why how many much list
    show give find return display tell me us all each every any some that this these those
    there their its his her it they them than then as into over under between more less
    most least number total average count name names please also only other same different
    distinct unique per among both either neither can could would should will may might
    must i you he she we our your get got make made out up down about such just very so if
    else while after before during since until within without top bottom first last one two
    three value values result results record records information detail details time times
    everything anything something thing things higher lower greater fewer larger smaller
    above below less more ascending descending alphabetical alphabetically order ordered
    sorted sort respectively percentage percentages percent ratio ratios proportion fraction
    share daily weekly monthly yearly annual annually quarterly hourly week weeks trend trends
    whats whos hows doing come comes through second third mostly database data choose chose"""
    )
    | CONNECTIVES
    | REQUEST_VERBS
    | IRREGULAR_PARTICIPLES
    | frozenset(SUPERLATIVES)
    | AGGREGATE_WORDS
    | IMPERATIVES
    | MONTH_WORDS
    | NUMBER_WORD_SET
)

NEGATION_WORDS = _words("not no never without except excluding none neither nor other")

#: The word DIVIDED_RE needs.
DIVIDED_WORDS = _words("divided")

#: Words that open a yes/no question.
YES_NO_OPENERS = _words("is are does do did was were can could has have had will should would")

#: Words that open a request for rows.
LIST_OPENERS = _words("list show name display enumerate which give find provide")

#: Words that open a question or a request (a restated question, not notes).
REQUEST_OPENERS = (
    YES_NO_OPENERS
    | LIST_OPENERS
    | _words(
        "what who whom whose when where why how count calculate compute return get tell "
        "identify indicate determine please select retrieve fetch"
    )
    # a reformulation written as the figure it asks for ("Average order amount for orders
    # shipped to France.", "Total revenue in Q2 2024 by region.")
    | _words("average avg total sum number top mean median percentage share ratio proportion")
)

#: Capitalised words that are never values: question words, imperatives, pronouns, and the
#: acronyms that name attributes ("ID", "URL").
NOT_VALUES = _words(
    "what which who whom whose when where why how list show name give find provide please "
    "state among for in of on at by from with and or the a an is are was were do does did i "
    "id ids url urls sql api dob ssn gpa zip pin null n/a tba yes no true false calculate "
    "count identify indicate mention return tell describe determine compute sort order rank "
    "also then if between refers refer divide subtract multiply sum avg max min as not "
    "distinct where ok it its they he she his her their this that these those there here "
    "each every all any some am pm number numbers total year years month months week weeks "
    "day days yoy qoq mom ytd mtd qtd"
)

#: Lower-case words allowed inside a capitalised value ("Bank of America", "Wizards of the Coast").
VALUE_CONNECTORS = _words("of for de del der la le du da van von y & on upon the a an")

#: A word after a capitalised phrase that makes it an attribute, not a value ("TG level").
ATTRIBUTE_NOUNS = _words(
    "level levels score scores index value values concentration count counts id ids code "
    "codes number numbers column columns field fields table tables status test tests rating "
    "ratings result results size sizes"
)

#: Last words of a capitalised phrase that make it an attribute name ("School Ownership Code").
ATTRIBUTE_HEADS = ATTRIBUTE_NOUNS | _words(
    "rank ranking name names date dates type types size rate rates percentage ratio amount "
    "total assignment identifier description category"
)

#: Words before "number of" that make it a label, not a count ("phone number of").
NUMBER_LABELS = _words(
    "phone telephone fax id identification serial house street account model version room "
    "jersey shirt registration contact card zip postal reference order flight license "
    "licence passport tracking member student employee customer invoice policy course bank "
    "routing catalog part product booking ticket vehicle unit lot vote"
)

#: Words before "number of" that aggregate a stored number ("the average number of").
NUMBER_OWNERS = _words(
    "average avg mean maximum max minimum min highest lowest largest smallest most least "
    "greatest fewest biggest top total"
)

#: After "X count": the count is a stored quantity compared or set, not one asked for
#: ("posts with a view count above 1000", "answer count of 0").
COUNT_COMPARED = re.compile(
    r"\s*(?:of\s+)?(?:[<>=!]|\d|over\b|above\b|under\b|below\b|more\b|less\b|fewer\b|"
    r"greater\b|higher\b|lower\b|at\s+(?:least|most)\b|between\b|exceed|is\b|was\b|are\b|"
    r"were\b|equals?\b|bigger\b|smaller\b)"
)

#: Words that end a noun phrase.
PHRASE_STOPS = _words(
    "of in on at for from to by with without per and or but than that which who whose whom "
    "where when is are was were be been has have had do does did among across over under "
    "above below into as if each every all between during since before after until there "
    "it they them their its can will would should could not also then along including "
    "respectively ever so far overall please what how sorted ordered grouped ranked listed "
    "refers refer means mean the a an get gets got make makes take takes"
)

#: Words between a column name and its value ("whose country is Germany").
COLUMN_LINKS = _words("the is are was as named called a an")

#: Verb forms that end a noun phrase although they do not end in -ed ("wines made from").
NOUN_PHRASE_PARTICIPLES = _words("made taught bought sold held won written given taken done")

#: Plural nouns without a final s.
IRREGULAR_PLURALS = _words("people children men women data")

#: Determiners skipped at the start of a noun phrase.
DETERMINERS = _words("the a an all any this that these those its their his her")

#: Words before a number that make it a quantity or a top-k, not an identifier ("top 5").
NOT_ATTRIBUTE_BEFORE_NUMBER = _words(
    "top first last than least most over under above below about around approximately "
    "nearly almost exactly only just list show give find return get have has had with are "
    "is was were and or of in on at to from for by the a an all which what who between "
    "since after before until during within scored received won made got take took equal "
    "equals per every next past minus plus times"
)

#: Words after a number that leave it an identifier ("district 5 and", "age 18 who").
AFTER_IDENTIFIER_NUMBER = _words(
    "and or who whom which that with in on at for of to from by has have had is are was "
    "were did does do"
)

#: Words before a year that make it a date ("in 2023", "the 2009 Grand Prix").
YEAR_LEADS = _words(
    "in during of for year years season on at the from to and or since between fiscal "
    "calendar by throughout until"
)

#: Words after a year that keep it a date although a lower-case word follows.
YEAR_TAILS = _words("season seasons year and or to through until with in who which that")

#: Temporal prepositions -> operator on the year or date that follows.
YEAR_OPS: dict[str, str] = (
    dict.fromkeys(("after", "later than"), ">")
    | dict.fromkeys(
        ("since", "from", "starting", "starting from", "starting in", "on or after", "in or after"),
        ">=",
    )
    | dict.fromkeys(("before", "prior to", "earlier than"), "<")
    | dict.fromkeys(
        ("until", "till", "up to", "through", "on or before", "in or before", "by"), "<="
    )
)

#: Comparative cues -> operator on the number that follows ("more than 10" -> ">").
COMPARATIVES: dict[str, str] = {
    cue: op
    for op, cues in (
        (
            ">",
            "more than|greater than|larger than|bigger than|higher than|more then|greater then|"
            "over|above|exceeds|exceed|exceeded|exceeding|beyond|older than|longer than|"
            "taller than|heavier than|surpassing|in excess of|upwards of|later than|north of",
        ),
        (
            ">=",
            "at least|no less than|not less than|no fewer than|not fewer than|a minimum of|"
            "minimum of|greater than or equal to|more than or equal to|"
            "equal to or greater than|equal to or more than|no lower than|not lower than|"
            "equal to or higher than|equal to or larger than|"
            "no younger than|greater or equal to|greater than or equal|reach|reaches|reached",
        ),
        (
            "<",
            "less than|fewer than|lower than|smaller than|less then|fewer then|under|below|"
            "younger than|shorter than|cheaper than|lighter than|beneath|earlier than|south of",
        ),
        (
            "<=",
            "at most|no more than|not more than|no greater than|not greater than|"
            "no higher than|not higher than|a maximum of|maximum of|up to|"
            "less than or equal to|equal to or less than|not exceeding|not over|not above|"
            "equal to or lower than|equal to or smaller than|"
            "no older than|less or equal to",
        ),
        ("=", "equal to|equals|equal|exactly|precisely"),
        ("!=", "not equal to|not equal|unequal to|does not equal"),
    )
    for cue in _list(cues, "|")
}

#: Words before "by" that make it an ordering or an agent, not a grouping.
NOT_GROUP_BY = _words(
    "sort order rank arrange list made paid run held won led divided multiplied side step "
    "one and or them it is are was were be been followed than first then lastly finally "
    "secondly also"
)

#: Words after "per" that make it a rate ("pages per minute"), not a grouping.
RATE_UNITS = _words("minute minutes second seconds hour hours capita cent unit person head")

#: Function names in enrichment formulas that are not columns.
CODE_WORDS = _words(
    "select from where and or not is null in between like as case when then else end "
    "distinct divide multiply subtract add sum count avg average max min year month day date "
    "strftime substr substring cast real integer int float text iif if round abs length "
    "lower upper julianday current_timestamp current_date curdate now datetime timestamp "
    "true false by order group having limit desc asc on join concat coalesce ifnull instr "
    "replace trim the of to refers refer percentage calculation total ratio rate"
)

#: Code function names that may also be column names ("year(d)" vs a column "year").
CODE_NAMES_AS_COLUMNS = _words("year month date day text rate ratio total")

#: Function names that are aggregates, canonical.
CODE_AGGREGATES: dict[str, str] = {
    "count": "count",
    "sum": "sum",
    "avg": "avg",
    "average": "avg",
    "max": "max",
    "min": "min",
}

#: Function names that denote arithmetic in a formula (not a column's function).
ARITHMETIC_FUNCS = _words("subtract divide multiply add cast iif case")

#: Words that separate a code clause's operand from the NL phrase before it.
CODE_BOUNDARIES = _words("where and or when then not if on else case with")

#: Value codes a hint may use without the question stating them ("isPromo = 1").
CODE_VALUES = _words("0 1 true false y n yes no t f null + -")


# ----------------------------------------------------------------------------- patterns
# The cue patterns compiled from the lists above; group names are read by stef.nl.spec.


def alternation(words: Iterable[str]) -> str:
    r"""Regex alternation of ``words``, longest first, spaces matching any whitespace.

    >>> print(alternation(["at least", "at"]))
    at\s+least|at
    """
    return "|".join(
        re.escape(w).replace(r"\ ", r"\s+") for w in sorted(set(words), key=len, reverse=True)
    )


_FOLDED: dict[int, tuple[re.Pattern[str], re.Pattern[str]]] = {}  # by id: hashing a pattern is slow
_PATTERN_PART = re.compile(r"\\.|\(\?P<\w+>|\(\?P=\w+\)|[A-Z]")


def folded(rx: re.Pattern[str]) -> re.Pattern[str]:
    r"""The case-sensitive ASCII twin of a case-insensitive pattern, for lower-case text.

    On ``s.lower()`` of a :func:`~stef.nl.words.plain_ascii` ``s`` the twin matches exactly
    where ``rx`` matches ``s`` (same spans, same groups up to case); ``re.IGNORECASE`` and
    Unicode ``\w``, ``\b``, ``\d`` (a table look-up a character) make Python's regex engine
    slower. Letters are lowered outside escapes and group names.

    >>> folded(re.compile(r"\bTop\s+(?P<N>\d+)[A-Z]", re.I)).pattern
    '\\btop\\s+(?P<N>\\d+)[a-z]'
    """
    hit = _FOLDED.get(id(rx))
    if hit is not None and hit[0] is rx:
        return hit[1]
    src = rx.pattern
    assert rx.flags & re.I and not re.search(r"\(\?[aiLmsux]", src), src
    lowered = _PATTERN_PART.sub(
        lambda m: m.group(0).lower() if len(m.group(0)) == 1 else m.group(0), src
    )
    twin = re.compile(lowered, rx.flags & ~(re.I | re.U) | re.A)
    _FOLDED[id(rx)] = (rx, twin)
    return twin


# Same-length rewrites keep every position valid: curly quotes, "> =" -> ">= ".
TRANSLATE = str.maketrans(
    {"‘": "'", "’": "'", "“": '"', "”": '"', "\u00a0": " ", "–": "-", "—": "-", "′": "'"}
)
SPLIT_OPS = re.compile(r"([<>!])\s=")
PREV_WORD = re.compile(r"[a-z0-9_'\-]+")
CODE_ID = re.compile(r"[A-Z]{1,4}\d")  # TR007_4_19: a code value despite its underscores

_NUMW = alternation(NUMBER_WORDS)
_DIGITS = r"(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?"
_CURRENCY = r"(?:(?:us{1,2}\$|usd\s?|[$€£])\s?)?"
_NUM = (
    rf"{_CURRENCY}(?:{_DIGITS}(?:(?:[kmb]|bn|mn)\b)?|(?:{_NUMW})\b)"
    r"(?:\s?(?:%|percent\b|per\s?cent\b))?(?:\s(?:million|thousand|billion)\b)?"
)
NUM_TEXT = re.compile(
    rf"^{_CURRENCY}(?P<n>{_DIGITS}|{_NUMW})(?P<k>bn|mn|[kmb])?(?P<pct>\s?(?:%|percent|per\s?cent))?"
    r"(?:\s(?P<mult>million|thousand|billion))?$",
    re.I,
)
_SMALL_NUM = rf"(?:\d{{1,3}}(?:,\d{{3}})+(?!\d)|\d+|(?:{_NUMW})\b)"  # "1,000"
BARE_NUMBER = re.compile(r"\d(?<![\w.$/:-]\d)(?:\d{0,2}(?:,\d{3})+|\d*)(?:\.\d+)?(?![\w/%:-]|\.\d)")
NO_NUMBER = re.compile(r"(?:\b(?:No|no|NO)\.|#)\s?(?P<n>\d+)\b")

#: A word of a capitalised run; a trailing ``++``/``#`` stays on it (``C++``, ``C#``, ``F#``).
WORD = re.compile(r"(?:[A-Za-z0-9][\w'&.\-]*[\w&]|[A-Za-z0-9&])(?:\+\+|#)?")
LOW_WORD = re.compile(r"[a-z0-9][a-z0-9_'\-]*")
DQ = re.compile(r'"([^"\n]{1,150})"')
SQ = re.compile(r"'(?<![\w']')((?:''|[^'\n]){1,150}?)'(?!['\w])")
BQ = re.compile(r"`([^`\n]{1,150})`")
PARENS = re.compile(r"\([^()\n]{0,80}\)")
SENTENCE_START = re.compile(r"(?:^|[.?!:;\n]|[\"'(])\s*$")

LIKE_CUES = re.compile(
    r"\b(?:(?P<contains>contain(?:s|ing)?|includ(?:e|es|ing)|ha(?:s|ve|ving)\s+the)"
    r"|(?P<starts>(?:start|begin)(?:s|ning|ing)?\s+with|prefix(?:ed)?(?:\s+with)?)"
    r"|(?P<ends>end(?:s|ing)?\s+with|suffix(?:ed)?(?:\s+with)?)|(?P<like>like))"
    r"(?:\s+(?:the|a|an))?(?:\s+(?:lower|upper)[- ]?case)?"
    r"(?P<noun>\s+(?:word|phrase|string|substring|letter|character|text|"
    r"pattern)s?)?\s*$",
    re.I,
)
#: One letter a name starts with, ends with or contains ("containing the letter t").
INITIAL_LIKE = re.compile(
    r"\b(?:(?:(?:start|begin)(?:s|ning|ing)?|end(?:s|ing)?)\s+with(?P<said>)|contain(?:s|ing)?)"
    r"\s+(?:the\s+)?(?:(?:lower|upper)[- ]?case\s+)?(?:letter\s+|(?P=said))"
    r"(?P<v>[a-z0-9])(?![\w'-])(?P<next>\s*\S?)",
    re.I,
)
#: A dotted token a value starts, ends with or contains: a domain, an extension, a version
#: ("ending with gmail.com", "ends in .pdf", "starting with v2.1").
DOTTED_LIKE = re.compile(
    r"\b(?:(?:start|begin)(?:s|ning|ing)?\s+with|end(?:s|ing)?\s+(?:with|in)|contain(?:s|ing)?)"
    r"\s+(?P<v>@?\.?[a-z0-9][a-z0-9_-]*(?:\.[a-z0-9_-]+)+|@?\.[a-z0-9]{2,5})(?![\w@.-])",
    re.I,
)
NEGATION_BEFORE = re.compile(
    r"\b(?:(?:(?:do|does|did)\s+not|doesn't|don't|didn't)\s+[a-z]+\b"  # "do not suffer"
    r"|(?:not|except|excluding|exclude|besides|never|without|other\s+than|apart\s+from|"
    r"aside\s+from|outside|isn't|aren't|wasn't|weren't|doesn't|don't|didn't|neither|nor)\b"
    r"(?:\s+(?:[a-z]+(?:ed|es|s|e)|taught|written|given|taken|held|won|bought|sold|built|known"
    r"|led|paid|sent|kept|found|brought|drawn|grown|shown|chosen|driven|run|born)\b)?)"
    r"(?:\s+(?:in|from|of|at|on|to|the|a|an|be|been|is|are|equal\s+to|named|called|like|"
    r"including|include|have|has|with|for|by|made\s+by|contain|contains|containing|mention|"
    r"mentioning|match|matching|start|starting|end|ending|letter|letters|word|words|string|"
    r"character|characters|phrase|text)){0,4}"
    # the attribute it names: "not have the status", "not taught by teacher", "not have unit of
    # measurement"
    r"(?:\s+(?:(?:the|a|an|any)\s+)?[a-z]+(?:\s+of\s+[a-z]+)?(?:\s+(?:of|for|by|with))?)?\s*$",
    re.I,
)
#: A negation that governs a relative clause ending where a value stands: "do not include
#: rooms whose major use starts with 'ZUSE'", "exclude usage types that include 'STORAGE'".
NEGATED_CLAUSE = re.compile(
    r"\b(?:exclude|excluding|except|(?:do|does|should)\s+not\s+include|don't\s+include|"
    r"not\s+including|without)\s+(?:the\s+|any\s+|all\s+)?(?:[a-z\-/]+\s+){0,8}?"
    r"(?:whose|that|which|who|with|where)\b[^.;,!?]*$",
    re.I,
)
#: What joins the values of one list: "exclude '139' and '250'".
LIST_JOIN = re.compile(r"^\s*(?:,\s*)?(?:(?:and|or|nor)\s+)?$")
NEGATION_ANY = re.compile(
    r"\b(?:not|no(?!\.\s*(?:of\b|\d))|never|without|except|excluding|none|neither|nor"
    r"|other\s+than|\w+n't)\b", re.I
)

# Dates ------------------------------------------------------------------------------------
_MONTH_ALT = alternation(MONTHS)
_FULL_MONTHS = alternation(m.title() for m in MONTHS if len(m) > 3 and m != "sept")
_TIME = r"(?:[ T]\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:\s?[AaPp][Mm])?)?"
_ISO_DATE = rf"\d{{4}}[-/.]\d{{1,2}}[-/.]\d{{1,2}}{_TIME}"
_US_DATE = rf"\d{{1,2}}/\d{{1,2}}/\d{{4}}{_TIME}"
_TEXT_DATE = (
    rf"(?:(?:{_MONTH_ALT})\.?\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+\d{{4}}"
    rf"|\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:{_MONTH_ALT})\.?,?\s+\d{{4}})"
)
_MONTH_YEAR = rf"(?:{_MONTH_ALT})\.?,?\s+(?:of\s+)?\d{{4}}"
_ANY_DATE = rf"(?:{_ISO_DATE}|{_US_DATE}|{_TEXT_DATE}|{_MONTH_YEAR})"
_DATE_OPS = alternation(YEAR_OPS)
DATE_RANGE = re.compile(  # and two whole dates alone: "(2025-04-01 to 2025-06-30)"
    rf"\b(?:between|from)\s+(?:the\s+)?(?P<a>{_ANY_DATE}),?\s+(?:and|to|until|till|through)\s+"
    rf"(?:the\s+)?(?P<b>{_ANY_DATE})(?![\w/-])|(?<![\w/.-])(?P<c>{_ISO_DATE}|{_US_DATE}|{_TEXT_DATE})"
    rf"\s*(?:to|until|till|through|thru|-)\s*(?P<d>{_ISO_DATE}|{_US_DATE}|{_TEXT_DATE})(?![\w/-])",
    re.I,
)
DATE_RE = re.compile(rf"(?<![\w/.-])(?P<d>{_ANY_DATE})(?![\w/-]|\.\d)", re.I)
#: Two months of one year: ``between January and March 2017``, ``May and June 2021``.
MONTH_SPAN = re.compile(
    rf"\b(?P<lead>between|from)?\s*(?P<m1>{_FULL_MONTHS}|{_MONTH_ALT})\.?\s*"
    rf"(?P<join>and|to|until|till|through|thru|-)\s*(?P<m2>{_FULL_MONTHS}|{_MONTH_ALT})\.?,?\s+"
    r"(?:of\s+)?(?P<y>(?:1[89]|20)\d\d)\b",
    re.I,
)
#: A run of days ending on a date: ``the 7-day period ending on 2017-07-31``.
DAYS_ENDING = re.compile(
    rf"\b(?:the\s+)?(?P<n>\d{{1,3}}|{_NUMW})[-\s]days?\s+(?:period|window|span|stretch|range)?\s*"
    rf"(?:ending|ended|that\s+ends?|up\s+to|through)\s+(?:on\s+|with\s+)?(?P<d>{_ANY_DATE})",
    re.I,
)
DATE_OP_BEFORE = re.compile(rf"\b(?P<op>{_DATE_OPS})\s+(?:the\s+)?$", re.I)
_YEAR = r"(?:1[89]\d\d|20\d\d)"
YEAR_RANGE = re.compile(
    rf"\b(?:between|from)\s+(?:the\s+)?(?:years?\s+)?(?P<a>{_YEAR})\s*"
    rf"(?:and|to|until|till|through|-)\s*(?:the\s+)?(?:year\s+)?(?P<b>{_YEAR})\b(?![\w/%-])"
    rf"|(?<![\w/.$-])(?P<c>{_YEAR})\s*(?:-|to|through|until)\s*(?P<d>{_YEAR})\b(?![\w/%-])",
    re.I,
)
SEASON = re.compile(rf"(?<![\w/.-]){_YEAR}/(?:{_YEAR}|\d\d)(?![\w/-])")
DECADE = re.compile(r"(?<![\w/.-])(?P<y>(?:1[89]|20)\d0)'?s\b")
YEAR_OP = re.compile(
    rf"\b(?P<op>{_DATE_OPS})\s+(?:the\s+)?(?:(?:years?|seasons?)\s+(?:of\s+)?)?(?P<y>{_YEAR})\b"
    r"(?![\w/%-]|\.\d)"
    rf"|(?<![\w/.$-])(?P<y2>{_YEAR})\s+(?P<post>(?:or|and)\s+(?:later|after|afterwards|beyond|"
    r"onwards?|earlier|before)|onwards?)\b",
    re.I,
)
FOUR_DIGITS = re.compile(r"\d\d{3}")  # \d{4}, with a first character the engine scans for
YEAR_ALONE = re.compile(r"(?:1(?<![\w/.$,-]1)[89]\d\d|2(?<![\w/.$,-]2)0\d\d)(?![\w%/-]|\.\d|,\d)")
YEAR_PREP = re.compile(r"\b(?:in|during|for|of)\s+$", re.I)
RANKED_BY = re.compile(r"\s+(?:by|based\s+on|in\s+terms\s+of|according\s+to)\s+", re.I)
QUARTER = re.compile(  # and halves: "Q3 2021", "the first half of 2023", "H2 2022"
    r"\b(?:(?P<qh>[qh])(?P<q>[1-4])|(?P<nth>first|second|third|fourth)\s+(?P<part>quarter|half))"
    rf"\s*(?:of\s+|,\s*)?(?P<y>{_YEAR})\b",
    re.I,
)
#: A month named alone: its full name, "May" too (capitalised after "in", never the verb).
_MONTH_NAMES = f"{_FULL_MONTHS}|May"
MONTH_ALONE = re.compile(rf"\b(?:in|during|of|for|on)\s+(?P<m>{_MONTH_NAMES})\b")
MONTH_NEXT = re.compile(rf"\s*(?:,\s*)?(?:and|or|&|,)\s+(?:in\s+)?(?P<m>{_MONTH_NAMES})\b")
RELATIVE = re.compile(
    r"\b(?P<which>last|this|current|previous|past|next|prior)\s+(?:(?:full|whole|calendar)\s+)?"
    r"(?P<unit>year|month|week|quarter|hour|day)\b(?!\s+of\b)"  # not "the last week of May"
    rf"|\b(?:in\s+)?(?:the\s+)?(?:last|past|previous|recent)\s+(?P<n>\d+|{_NUMW})\s+"
    r"(?:(?:full|complete|whole|entire|calendar)\s+)?(?P<units>days|weeks|months|years|hours|minutes)\b"
    r"|\b(?P<day>today|yesterday)\b"  # YTD, "year-to-date": this year to date
    r"|\b(?P<td>[ymqw])(?:td|(?<=y)ear[- ]to[- ]date|(?<=m)onth[- ]to[- ]date"
    r"|(?<=q)uarter[- ]to[- ]date|(?<=w)eek[- ]to[- ]date)\b",
    re.I,
)

#: An aggregate or an extreme one noun before "total" ("the average order total", "the
#: highest cart total"): there "total" is the measured noun, unless a noun follows it
#: (:data:`NOUN_NEXT`: a word that is no preposition, link or verb "to be").
MEASURED_TOTAL = re.compile(
    r"\b(?:average|avg|mean|median|maximum|minimum|max|min|highest|lowest|largest|smallest"
    r"|biggest)\s+[a-z]+\s+$"
)
NOUN_NEXT = re.compile(
    r"\s+(?!(?:for|of|in|per|by|from|on|at|to|with|across|over|and|or|is|was|are|were)\b)[a-z]"
)

# Comparatives -----------------------------------------------------------------------------
CMP_RE = re.compile(
    rf"\b(?P<cue>(?:{alternation(COMPARATIVES)})(?:\s+or\s+equal(?:\s+to)?)?)\s+"
    r"(?:(?:the|a|an|about|around)\s+)?"
    rf"(?P<n>(?:-|minus\s+)?{_NUM})",
    re.I,
)
#: A bound on how often: "more than once", "at least twice" (a count above 1, of 2 or more).
TIMES = {"once": "1", "twice": "2", "thrice": "3"}
TIMES_CMP_RE = re.compile(
    rf"\b(?P<cue>{alternation(COMPARATIVES)})\s+(?P<n>once|twice|thrice)\b", re.I
)
#: A comparison written with its symbol after a word: ``reputation >= 100``, ``Score > 0``.
SYMBOL_CMP_RE = re.compile(
    r"(?:(?<=[A-Za-z\])]\s)|(?<=[A-Za-z\])]))(?P<op>>=|<=|=>|=<|<>|!=|>|<)\s*"
    r"(?P<n>-?\d+(?:\.\d+)?)(?![\w%-]|\.\d)"
)
SYMBOL_OPS = {
    ">=": ">=",
    "=>": ">=",
    "<=": "<=",
    "=<": "<=",
    "<>": "!=",
    "!=": "!=",
    ">": ">",
    "<": "<",
}
POSTFIX_RE = re.compile(
    rf"(?<![\w.$/-])(?P<n>(?:(?<!\S)-|\bminus\s+)?{_NUM})(?:\s+[a-z]+(?:\s+old)?)?\s*"
    r"(?:(?P<ge>(?:or|and)\s+(?:more|above|higher|greater|older|over|longer|bigger|larger|up|"
    r"later|newer)\b|\+(?![\w+]))"
    r"|(?P<le>(?:or|and)\s+(?:less|fewer|below|lower|younger|under|smaller|shorter|earlier)\b))",
    re.I,
)
BETWEEN_RE = re.compile(
    rf"\b(?:between|from|ranging\s+from|(?:in|within)\s+the\s+range\s+(?:of\s+)?)\s*"
    rf"(?P<a>{_NUM})\s+"
    rf"(?:and|to|-)\s+(?P<b>{_NUM})"
    rf"|(?<![\w.$/-])(?P<c>{_CURRENCY}{_DIGITS})\s*(?:-|to|through)\s*(?P<d>{_CURRENCY}{_DIGITS})"
    r"(?=\s+[a-z]|\s*[?.!;]?\s*$)",
    re.I,
)

# Top-k, superlatives, ordering ----------------------------------------------------------------
_SUP_ALT = alternation(SUPERLATIVES)
TOPK_RE = re.compile(
    rf"\b(?P<tb>top|bottom)[- ](?P<a>{_SMALL_NUM})\b(?!\s*(?:%|percent))"  # top 10%: a share
    rf"|\b(?P<fl>first|last)\s+(?P<b>{_SMALL_NUM})\b(?!\s*(?:%|percent|letters?|characters?|digits?))"
    rf"|\b(?P<c>{_SMALL_NUM})\s+(?P<sup>{_SUP_ALT})\b"
    rf"|\b(?<!\bat\s)(?!least\b)(?P<sup2>most\s+recent|{_SUP_ALT})\s+(?P<d>{_SMALL_NUM})\s+(?=[a-z])"
    rf"(?!(?:%|percent|times?)\b)",
    re.I,
)
WHICH_N_RE = re.compile(
    rf"\b(?:which|what|list|name|show|find|give|return|display|from|among)\s+(?:me\s+)?(?:the\s+)?"
    rf"(?P<n>{_SMALL_NUM})\s+(?=[a-z])",
    re.I,
)
SUP_RE = re.compile(rf"\b(?P<w>most\s+recent(?:ly)?|{_SUP_ALT}|first|last)\b", re.I)
ORDINAL_BEFORE = re.compile(rf"\b(?P<ord>{alternation(ORDINALS)}|\d+(?:st|nd|rd|th))[\s-]+$", re.I)
VALUE_FORM = re.compile(
    r"(?:^|[,;:.?!]\s*|\band\s+|\bof\s+)(?:(?:what|find|show|give|list|return|state|tell\s+me|"
    r"calculate|compute|provide|identify|get|determine|display|indicate|mention)\s+)?"
    r"(?:(?:is|was|are|were|'s|me)\s+)?(?:the\s+)$",
    re.I,
)
DIRECTION = re.compile(
    r"\b(?P<desc>desc(?:ending(?:ly)?)?|decreasing|reverse(?:\s+alphabetical)?|from\s+(?:the\s+)?"
    r"(?:highest|largest|most|biggest|greatest|high|large|big|newest|latest|most\s+recent)\s+to"
    r"\s+(?:the\s+)?\w+(?:\s+recent(?:ly)?)?|(?:highest|largest|most|biggest|greatest|newest|"
    r"latest)\s+(?:\w+\s+){0,2}first)\b"
    r"|\b(?P<asc>asc(?:ending(?:ly)?)?|increasing|alphabetical(?:ly)?|alphabetic|chronological|"
    r"(?:lowest|smallest|least|fewest|oldest|earliest)\s+(?:\w+\s+){0,2}first|"
    r"from\s+(?:the\s+)?(?:lowest|smallest|least|fewest|low|small|oldest|earliest|a)\s+to"
    r"\s+(?:the\s+)?\w+(?:\s+recent(?:ly)?)?)\b",
    re.I,
)
ORDER_BY_RE = re.compile(
    r"\b(?:sort(?:ed)?|order(?:ed)?|rank(?:ed)?|arrange(?:d)?|list(?:ed)?|(?:first|then|and|lastly|"
    r"finally)(?=\s+by))\s+(?:them\s+|it\s+|the\s+(?:results?|list|data)\s+)?"
    r"(?:in\s+\w+\s+order\s+)?by\s+"
    r"(?:(?:the\s+)?(?:ascending|descending|increasing|decreasing|alphabetical|chronological|"
    r"reverse)\s+order\s+of\s+)?(?P<key>[^,.;?!]{1,60})",
    re.I,
)
IN_ORDER_RE = re.compile(
    r"\bin\s+(?:the\s+|an?\s+)?(?:(?:ascending|descending|increasing|decreasing|reverse\s+"
    r"alphabetical|alphabetical|alphabetic|reverse\s+chronological|chronological|reverse|asc|"
    r"desc)\s+)order(?:\s+(?:of|by)\s+(?P<key>[^,.;?!]{1,50}))?|\balphabetically\b",
    re.I,
)
FROM_TO_RE = re.compile(
    r"\bfrom\s+(?:the\s+)?(?:highest|largest|most|biggest|greatest|oldest|earliest|newest|latest|"
    r"most\s+recent(?:ly)?|lowest|least|smallest|fewest|youngest|high|low|large|small|big)\s+to\s+"
    r"(?:the\s+)?(?:highest|largest|most(?:\s+recent(?:ly)?)?|biggest|greatest|oldest|earliest|"
    r"newest|latest|lowest|least|smallest|fewest|youngest|high|low|large|small|big)\b",
    re.I,
)

# Aggregations, distinct, grouping, ratios ------------------------------------------------------
AGG_RE = re.compile(
    r"\b(?P<howmany>how\s+many)\b"
    r"|\b(?P<total_number>total\s+(?:number|count|no\.?)\s+of|total\s+count)\b"
    r"|\b(?P<number>number\s+of|no\.\s+of)\b|(?<![\w#])(?P<number_sign>#\s*of\b|#\s*(?=[a-z]))"
    r"|\b(?P<count>count)\b"
    r"|\b(?P<sum>sum\s+of|the\s+sum|summ?ed\s+up|in\s+total|total)\b"
    r"|(?<![\w-])(?P<avg>average|avg|mean)\b"
    r"|\b(?P<max>maximum|max)\b"
    r"|\b(?P<min>minimum|min)\b",
    re.I,
)
DISTINCT_RE = re.compile(
    r"\b(?:different|unique|distinct)\b(?!\s+(?:from|than|to|id|ids|identifiers?|keys?)\b)|\b(?:kinds?|types?|sorts?)\s+of\b",
    re.I,
)
GROUP_RE = re.compile(
    r"\b(?P<cue>grouped\s+by|group\s+by|broken\s+down\s+by|split\s+by|per|for\s+each|in\s+each|"
    r"of\s+each|on\s+each|for\s+every|each|by)\s+(?P<rest>[a-z])",
    re.I,
)
RATIO_RE = re.compile(
    rf"\b(?:{alternation(RATIO_WORDS)})\b|\bhow\s+many\s+percent|\bin\s+percentage", re.I
)
DIVIDED_RE = re.compile(r"\bdivided\s+by\b", re.I)
