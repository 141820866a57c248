"""Fact families about health, habits, family and feelings (see bench/parts/recall/facts.py)."""

from __future__ import annotations

from bench.parts.recall.facts import Family

FAMILIES: tuple[Family, ...] = (
    Family(
        "decaf",
        statements=(
            "I switched to {drink} in {month} because regular coffee {reason}.",
            "Since {month} it's only {drink} for me, regular coffee {reason}.",
        ),
        paraphrases=("why did I stop drinking regular coffee?", "what made me give up caffeine?"),
        slots={
            "drink": ("decaf", "herbal tea", "rooibos", "chicory coffee", "green tea"),
            "reason": (
                "kept me up at night",
                "made my heart race all afternoon",
                "was wrecking my stomach",
                "gave me the jitters at work",
            ),
        },
        near=(
            "The new café on the corner does a really good flat white.",
            "I spilled coffee all over my keyboard this morning.",
            "Is espresso actually stronger than drip coffee?",
            "The office coffee machine broke again.",
        ),
        others=("{first} switched to {drink} last year and swears by it.",),
    ),
    Family(
        "medication",
        repeatable=True,
        statements=(
            "My doctor put me on {med} for {condition}; I take it {when}.",
            "Started {med} this week for {condition}. I'm supposed to take it {when}.",
        ),
        keyed=("When am I supposed to take the {med}?", "What is the {med} for?"),
        paraphrases=("which pills was I prescribed lately?",),
        slots={
            "med": (
                "lisinopril",
                "metformin",
                "sertraline",
                "levothyroxine",
                "atorvastatin",
                "omeprazole",
                "montelukast",
                "propranolol",
                "gabapentin",
                "amlodipine",
            ),
            "condition": (
                "my blood pressure",
                "my thyroid",
                "anxiety",
                "acid reflux",
                "cholesterol",
                "asthma",
            ),
            "when": ("every morning with breakfast", "at bedtime", "twice a day", "right after lunch"),
        },
        near=(
            "The pharmacy line was ridiculous today.",
            "I hate swallowing big pills.",
            "My annual physical is coming up soon.",
        ),
        others=(
            "My mom just started {med} for her {condition}.",
            "The pharmacist asked if I'd ever taken {med}, no idea why.",
        ),
        mentions=("Picked up my {med} refill on the way home.", "Forgot my {med} this morning, oops."),
        replies=("I hope the {med} helps. Tell me how you feel in a few weeks.",),
    ),
    Family(
        "dentist",
        statements=(
            "My new dentist, Dr. {surname}, says I need a crown on a back molar.",
            "Saw Dr. {surname} today; apparently I need a crown on one of my molars.",
        ),
        keyed=("What did Dr. {surname} tell me?",),
        paraphrases=("what's going on with my teeth?",),
        slots={
            "surname": (
                "Okafor",
                "Lindqvist",
                "Abernathy",
                "Vashti",
                "Przybylski",
                "Nakagawa",
                "Delacroix",
                "Fitzwilliam",
                "Oyelaran",
                "Szabo",
            )
        },
        near=("I keep forgetting to floss.", "Bought one of those electric toothbrushes."),
        others=("My coworker swears by Dr. {surname}, but he's always booked.",),
        mentions=("Have another appointment with Dr. {surname} next {weekday}.",),
        replies=("Dental work is never fun, hang in there.",),
    ),
    Family(
        "sister_job",
        repeatable=True,
        statements=(
            "My sister {first} just got a job as {job} in {city}!",
            "Big news: {first}, my sister, is moving to {city} to work as {job}.",
        ),
        keyed=("What does {first} do for work now?",),
        paraphrases=("what new position did my sibling land?",),
        slots={
            "job": (
                "a pediatric nurse",
                "a sound engineer",
                "a park ranger",
                "an actuary",
                "a pastry chef",
                "a UX designer",
                "a marine biologist",
                "a court stenographer",
            )
        },
        near=("Job hunting is brutal right now.", "My sister and I used to fight over the TV remote."),
        others=("My cousin {first} works as {job} in {city}.",),
        replies=("That's amazing news for {first}!",),
    ),
    Family(
        "allergy",
        repeatable=True,
        statements=("Turns out I'm allergic to {allergen}; {incident}.",),
        keyed=("What happened when I had {allergen}?",),
        paraphrases=("what do I react badly to?",),
        slots={
            "allergen": (
                "cashews",
                "sesame",
                "shellfish",
                "buckwheat",
                "kiwi fruit",
                "penicillin",
                "latex",
                "mustard seed",
            ),
            "incident": (
                "my throat got itchy at a dinner party",
                "I broke out in hives at a wedding",
                "I ended up in urgent care after lunch",
            ),
        },
        near=("Pollen season is destroying me this year.", "I'm trying to eat more vegetables."),
        others=("{first} is allergic to {allergen}, so we never cook with it when she visits.",),
    ),
    Family(
        "manager_leaving",
        statements=("My manager {first} is leaving {company} at the end of {month}, I'm kind of nervous.",),
        keyed=("When is {first} leaving {company}?",),
        paraphrases=("who is quitting at my workplace?",),
        slots={
            "company": (
                "Halvorsen Logistics",
                "Brightwater Labs",
                "Kestrel Analytics",
                "Moonbeam Foods",
                "Tidewell Insurance",
            )
        },
        near=(
            "The quarterly review meeting ran two hours over.",
            "Someone microwaved fish in the office again.",
        ),
        others=("I heard {first} got an offer from {company}.",),
    ),
    Family(
        "class",
        repeatable=True,
        statements=("I signed up for {course} classes on {weekday} evenings at {venue}.",),
        keyed=("When are my {course} classes?",),
        paraphrases=("what new hobby did I pick up?",),
        slots={
            "course": (
                "pottery",
                "salsa dancing",
                "bouldering",
                "cello",
                "Mandarin",
                "watercolor",
                "fencing",
                "improv comedy",
            ),
            "venue": ("the community center", "a studio near the river", "the old library building"),
        },
        near=(
            "I should really find a hobby that isn't my phone.",
            "My friend keeps inviting me to her book club.",
        ),
        others=("{first} has been doing {course} for years, she's really good.",),
    ),
    Family(
        "vegetarian",
        statements=("I've been vegetarian since {year}, mostly because of {why}.",),
        paraphrases=("why don't I eat meat?", "when did I cut out meat from my diet?"),
        slots={
            "why": (
                "a documentary about factory farms",
                "my cholesterol numbers",
                "my partner being vegan",
                "the environment",
            )
        },
        near=("Made a huge pot of chili for the week.", "That new burger place is always packed."),
        others=("{first} went vegan in {year} because of {why}.",),
    ),
    Family(
        "insomnia",
        statements=("I've been waking up at 3am every night since {event}.",),
        paraphrases=("why am I so exhausted lately?", "what's been messing with my rest?"),
        slots={
            "event": (
                "the baby arrived",
                "my promotion",
                "the construction next door started",
                "my dad's surgery",
            )
        },
        near=("I bought blackout curtains, we'll see.", "Napped for three hours and feel worse."),
        others=("{first} says she hasn't slept properly since {event}.",),
    ),
    Family(
        "fear",
        statements=("I've been terrified of {fear} ever since {incident}.",),
        paraphrases=("what am I scared of?", "what's my phobia?"),
        slots={
            "fear": ("deep water", "elevators", "bridges", "flying", "thunderstorms", "horses"),
            "incident": (
                "a bad accident when I was eight",
                "something that happened at summer camp",
                "a trip that went wrong as a kid",
            ),
        },
        near=("Watched a horror movie and couldn't sleep.",),
        others=("{first} is afraid of {fear}, which makes road trips interesting.",),
    ),
    Family(
        "kid_birthday",
        repeatable=True,
        statements=(
            "{first}'s birthday is {month} {day}, she's turning {small}.",
            "My daughter {first} turns {small} on {month} {day}.",
        ),
        keyed=("When is {first}'s birthday?",),
        paraphrases=("when should I plan my kid's party?",),
        near=("Birthday parties for kids are so expensive now.",),
        others=("My nephew {first}'s birthday is {month} {day}, I always forget.",),
    ),
    Family(
        "injury",
        statements=("I sprained my {body} playing {sport} last weekend.",),
        paraphrases=("how did I get hurt?", "what caused my injury?"),
        slots={
            "body": ("ankle", "wrist", "knee", "shoulder"),
            "sport": ("pickup basketball", "trail running", "ultimate frisbee", "tennis", "volleyball"),
        },
        near=("My back has been stiff from sitting all day.", "Stretching before the gym actually helps."),
        others=("{first} hurt her {body} playing {sport}, poor thing.",),
    ),
    Family(
        "language",
        statements=("I'm learning {language} on Duolingo, {num3}-day streak so far!",),
        keyed=("How long is my Duolingo streak?",),
        paraphrases=("which foreign tongue am I studying?",),
        slots={"language": ("Portuguese", "Korean", "Dutch", "Swahili", "Finnish", "Greek")},
        near=("I took French in high school and remember nothing.",),
        others=("{first} speaks fluent {language}, I'm so jealous.",),
    ),
    Family(
        "exam",
        repeatable=True,
        statements=("I passed the {cert} exam on my {nth} attempt!",),
        keyed=("How many tries did the {cert} take me?",),
        paraphrases=("what professional test did I get through?",),
        slots={
            "cert": ("CCNA", "PMP", "CPA", "CFA Level 1", "AWS Solutions Architect"),
            "nth": ("second", "third", "first", "fourth"),
        },
        near=("Studying after work is so hard.",),
        others=("{first} is studying for the {cert} exam right now.",),
        replies=("Congratulations, all that studying paid off!",),
    ),
    Family(
        "race",
        statements=("Finished my first {race}, legs are destroyed.",),
        paraphrases=("how fast was my first race?",),
        slots={
            "race": (
                "half marathon in just under two hours",
                "10K in 52 minutes",
                "marathon in four and a half hours",
                "5K in 28 minutes",
            )
        },
        near=("Running in the heat is miserable.",),
        others=("{first} ran a {race} last spring.",),
    ),
    Family(
        "quit_smoking",
        statements=("I quit smoking on {month} {day} and it's been really hard.",),
        paraphrases=("when did I give up cigarettes?",),
        near=("My coworker vapes constantly, it's so annoying.",),
        others=("{first} quit smoking on {month} {day} last year and never looked back.",),
    ),
    Family(
        "partner_job",
        statements=("My partner {first} works night shifts as {work}, so we barely see each other.",),
        keyed=("What does {first} do?",),
        paraphrases=("why do I rarely spend time with my significant other?",),
        slots={"work": ("an ER nurse", "a baker", "a security guard", "an air traffic controller")},
        near=("Date night got cancelled again.",),
        others=("{first} from my book club works as {work}.",),
    ),
    Family(
        "grandmother",
        statements=("My grandmother turns {grand_age} in {month}; we're throwing a party at {party_place}.",),
        paraphrases=("when is nana's big celebration?",),
        slots={
            "grand_age": ("90", "85", "100", "95"),
            "party_place": ("the Elks lodge", "my aunt's backyard", "a restaurant by the lake"),
        },
        near=("I should visit my grandparents more often.",),
        others=("My grandfather turned {grand_age} last {month}.",),
    ),
    Family(
        "migraine",
        statements=("I figured out my migraines start after {trigger}.",),
        paraphrases=("what sets off my headaches?",),
        slots={
            "trigger": (
                "a glass of red wine",
                "skipping lunch",
                "staring at bright screens",
                "eating aged cheese",
            )
        },
        near=("I've had a weird buzzing in my ears today.",),
        others=("{first} gets migraines after {trigger}.",),
    ),
    Family(
        "therapist",
        statements=("I started seeing a therapist named {first} every other {weekday}.",),
        keyed=("When do I see {first}?",),
        paraphrases=("how often do I have counselling sessions?",),
        near=("Mental health days should be a normal thing at work.",),
        others=("{first} told me she sees a counsellor every {weekday}.",),
    ),
)
