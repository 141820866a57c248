"""Places that hold other places: countries, the UK's nations, US states, Canada's provinces and the
continents, as `slots` words (lowercase, single spaces).

"I live in Scotland" and "I live in Glasgow" can both be true. Without a gazetteer a city cannot be
told to be in a region, so a plain state naming a region never undoes one naming a city, nor the
other way round; news of a move ("we moved to Scotland") still does, and so does another region
("I live in France"). The list is what people say most; a region missing from it is read as a
city, as before (core/memory/contradiction.py).
"""

from __future__ import annotations

# Comma-separated, so that a name of several words stays one name.
REGIONS: frozenset[str] = frozenset(
    name.strip()
    for name in """
    scotland, england, wales, northern ireland, ireland, britain, great britain, uk, united kingdom,
    france, germany, spain, portugal, italy, netherlands, holland, belgium, switzerland, austria,
    poland, sweden, norway, denmark, finland, iceland, greece, turkey, russia, ukraine, czechia,
    czech republic, hungary, romania, bulgaria, croatia, serbia, slovenia, slovakia, estonia,
    latvia, lithuania, luxembourg, usa, america, united states, canada, mexico, brazil, argentina,
    chile, peru, colombia, venezuela, cuba, china, japan, korea, south korea, india, pakistan,
    bangladesh, vietnam, thailand, indonesia, malaysia, philippines, singapore, australia,
    new zealand, nigeria, kenya, egypt, morocco, ghana, ethiopia, south africa, israel, iran, iraq,
    saudi arabia, uae, qatar, lebanon, jordan, europe, asia, africa, oceania, north america,
    south america, latin america, alabama, alaska, arizona, arkansas, california, colorado,
    connecticut, delaware, florida, georgia, hawaii, idaho, illinois, indiana, iowa, kansas,
    kentucky, louisiana, maine, maryland, massachusetts, michigan, minnesota, mississippi, missouri,
    montana, nebraska, nevada, new hampshire, new jersey, new mexico, north carolina, north dakota,
    ohio, oklahoma, oregon, pennsylvania, rhode island, south carolina, south dakota, tennessee,
    texas, utah, vermont, virginia, west virginia, wisconsin, wyoming, ontario, quebec,
    british columbia, alberta, manitoba, saskatchewan, nova scotia
    """.split(",")
)


def is_region(place: str) -> bool:
    """Whether `place` (slots' lowercase words) names a region that holds cities."""
    return place in REGIONS
