"""Word lists for the deterministic NL extractor (:mod:`stef.nlspec`).

Plain data, no logic: cue words for aggregations, superlatives, comparatives, dates and
the words that must never be read as values. Every entry is lower-case.

>>> NUMBER_WORDS["twelve"], SUPERLATIVES["fewest"], "phone" in NUMBER_LABELS
(12, 'asc', True)
"""

from __future__ import annotations


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
NUMBER_WORD_SET = frozenset(NUMBER_WORDS)

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

#: Words that trigger the GROUP BY step.
GROUP_WORDS = _words("group grouped broken split per each every by")

#: Words that trigger the explicit-ordering step.
ORDER_WORDS = _words("by order alphabetically from")

#: Words of relative dates ("last year", "today").
RELATIVE_DATE_WORDS = _words("last this current previous past next prior recent today yesterday")

#: Superlatives that rank by a date ("the most recent order").
TEMPORAL_SUPERLATIVES = _words("latest newest earliest oldest youngest recent")

#: Words after "the first"/"the last" that make it no ranking ("the first name").
NOT_RANKED = _words(
    "name names and or half quarter time letter letters character characters word words day "
    "days year month week season"
)

#: Words after "most"/"least" that rank by frequency ("the most common genre").
FREQUENCY_WORDS = _words("common popular frequent frequently often used")

#: Ratio nouns; a ratio is asked for when one follows a function word ("the percentage of").
RATIO_WORDS = _words("percentage percentages percent ratio ratios proportion fraction share rate")

#: Words that may precede a ratio noun when the question asks to compute it.
RATIO_LEADS = _words(
    "the a an what in as of and calculate compute find give show list state tell provide "
    "return get determine identify how"
)

#: Words that open a yes/no question.
YES_NO_OPENERS = _words("is are does do did was were can could has have had will should would")

#: Other words that open a question or a request (a restated question, not notes).
REQUEST_OPENERS = _words(
    "what who whom whose when where why how count calculate compute return get tell identify "
    "indicate determine please select retrieve fetch"
)

#: Words that open a request for rows.
LIST_OPENERS = _words("list show name display enumerate which give find provide")

#: Capitalised words that are never values: question words, imperatives, pronouns, and the
#: acronyms that name attributes ("ID", "URL").
NOT_VALUES = _words(
    "what which who whom whose when where why how list show name give find provide please "
    "state among for in of on at by from with and or the a an is are was were do does did i "
    "id ids url urls sql api dob ssn gpa zip pin null n/a tba yes no true false calculate "
    "count identify indicate mention return tell describe determine compute sort order rank "
    "also then if between refers refer divide subtract multiply sum avg max min as not "
    "distinct where ok it its they he she his her their this that these those there here "
    "each every all any some am pm"
)

#: Lower-case words allowed inside a capitalised value ("Bank of America", "Wizards of the Coast").
VALUE_CONNECTORS = _words("of de del der la le du da van von y & on upon the a an")

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
COMPARATIVES: dict[str, str] = (
    dict.fromkeys(
        _list(
            "more than|greater than|larger than|bigger than|higher than|over|above|exceeds|"
            "exceed|exceeded|exceeding|beyond|older than|longer than|taller than|"
            "heavier than|surpassing|in excess of|upwards of|later than",
            "|",
        ),
        ">",
    )
    | dict.fromkeys(
        _list(
            "at least|no less than|not less than|no fewer than|not fewer than|a minimum of|"
            "minimum of|greater than or equal to|more than or equal to|"
            "equal to or greater than|equal to or more than|no lower than|not lower than|"
            "no younger than|greater or equal to|greater than or equal",
            "|",
        ),
        ">=",
    )
    | dict.fromkeys(
        _list(
            "less than|fewer than|lower than|smaller than|under|below|younger than|"
            "shorter than|cheaper than|lighter than|beneath|earlier than",
            "|",
        ),
        "<",
    )
    | dict.fromkeys(
        _list(
            "at most|no more than|not more than|no greater than|not greater than|"
            "no higher than|not higher than|a maximum of|maximum of|up to|"
            "less than or equal to|equal to or less than|not exceeding|not over|not above|"
            "no older than|less or equal to",
            "|",
        ),
        "<=",
    )
    | dict.fromkeys(["equal to", "equals", "equal", "exactly", "precisely"], "=")
)

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
