"""The 23 hotel subcategories of the itemization form and the receipt labels hotels print for them.

Each subcategory has plain labels (a reader matching words gets them right) and confusable labels
(word matching picks a wrong subcategory, or none: "City Tax" is a non-room tax, "Honor Bar" is the
minibar, "Service Charge" is a gratuity). `surface_guess` is that naive word matcher: what an agent
does once the subcategory guide has left its context.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache


@dataclass(frozen=True)
class Subcategory:
    name: str
    description: str
    plain_labels: tuple[str, ...]
    confusable_labels: tuple[str, ...] = ()

    @property
    def labels(self) -> tuple[str, ...]:
        return self.plain_labels + self.confusable_labels


SUBCATEGORIES: tuple[Subcategory, ...] = (
    Subcategory("Room Charge", "Nightly room rate", ("Room Charge", "Room Rate", "Guest Room"), ("Accommodation",)),
    Subcategory("Room Tax", "Occupancy tax charged on the room rate", ("Room Tax", "Occupancy Tax"), ()),
    Subcategory(
        "Non-Room Tax",
        "City, tourism and other taxes not levied on the room rate",
        ("Non-Room Tax", "Sales Tax Non-Room"),
        ("City Tax", "Tourism Levy"),
    ),
    Subcategory("Resort Fee", "Daily resort, amenity or destination fee", ("Resort Fee", "Amenity Fee"), ()),
    Subcategory("Breakfast", "Breakfast, any outlet", ("Breakfast", "Breakfast Buffet"), ("Continental Room Service",)),
    Subcategory(
        "Restaurant",
        "Meals in hotel restaurants, incl. meals with external guests",
        ("Restaurant", "Dinner Restaurant"),
        ("Entertainment External", "Room Service & Meals", "Pool Bar Snacks"),
    ),
    Subcategory("Room Service", "In-room dining", ("Room Service", "Room Service Order"), ()),
    Subcategory("Lounge / Bar", "Drinks at the hotel bar or lounge", ("Lounge Bar", "Bar Lounge"), ("Cocktails",)),
    Subcategory("Parking", "Self or valet parking", ("Parking", "Self Parking"), ("Valet",)),
    Subcategory("Internet", "Wi-Fi and internet access", ("Internet", "Internet Access"), ("Wi-Fi Premium",)),
    Subcategory("Laundry", "Laundry, dry cleaning, pressing", ("Laundry", "Laundry Pressing"), ("Dry Cleaning",)),
    Subcategory("Telephone", "Phone calls from the room", ("Telephone", "Telephone Calls"), ("Long Distance",)),
    Subcategory("Minibar", "In-room minibar and honor bar", ("Minibar", "Minibar Items"), ("Honor Bar",)),
    Subcategory(
        "In-Room Entertainment", "Movies and pay TV in the room", ("In-Room Entertainment", "Movie Entertainment"),
        ("Pay-Per-View",),
    ),
    Subcategory("Business Center", "Printing, copies, business services", ("Business Center",), ("Print Services",)),
    Subcategory("Fitness / Spa", "Gym, spa and wellness", ("Fitness", "Spa"), ("Massage",)),
    Subcategory("Meeting Room", "Meeting and conference room rental", ("Meeting Room",), ("Conference Hall",)),
    Subcategory(
        "Early Check-In / Late Check-Out", "Early arrival or late departure fee", ("Early Check-In", "Late Check-Out"),
        (),
    ),
    Subcategory(
        "No-Show / Cancellation Fee", "No-show or cancellation penalty", ("Cancellation Fee", "No-Show Fee"), ()
    ),
    Subcategory("Gift Shop", "Hotel shop purchases", ("Gift Shop",), ("Sundries",)),
    Subcategory(
        "Hotel Transportation", "Hotel shuttle or car service", ("Hotel Transportation",), ("Airport Shuttle",)
    ),
    Subcategory("Gratuity", "Tips and service charges", ("Gratuity", "Gratuity Added"), ("Service Charge",)),
    Subcategory("Other Incidentals", "Anything not covered above", ("Other Incidentals", "Incidentals"), ("Misc.",)),
)

SUBCATEGORY_NAMES: tuple[str, ...] = tuple(s.name for s in SUBCATEGORIES)
BY_NAME: dict[str, Subcategory] = {s.name: s for s in SUBCATEGORIES}
LABEL_TO_SUBCATEGORY: dict[str, str] = {label: s.name for s in SUBCATEGORIES for label in s.labels}
CONFUSABLE_LABELS: frozenset[str] = frozenset(label for s in SUBCATEGORIES for label in s.confusable_labels)

assert len(SUBCATEGORIES) == 23, "the form has exactly 23 hotel subcategories"
assert len(LABEL_TO_SUBCATEGORY) == sum(len(s.labels) for s in SUBCATEGORIES), "a label maps to one subcategory"

_WORD = re.compile(r"[a-z]+")


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower())) - {"and", "in", "the"}


@lru_cache(maxsize=1024)
def surface_guess(label: str) -> str:
    """The subcategory sharing the most words with `label` (first on ties); the label itself if none share any.

    Deliberately naive: it is what an agent does without the guide, so confusable labels go wrong.
    """
    words = _words(label)
    best, best_score = None, 0
    for sub in SUBCATEGORIES:
        score = len(words & _words(sub.name))
        if score > best_score:
            best, best_score = sub.name, score
    return best if best is not None else label


def guide() -> list[dict[str, object]]:
    """The subcategory guide `list_subcategories` returns: name, description, receipt labels."""
    return [{"name": s.name, "description": s.description, "receipt_labels": list(s.labels)} for s in SUBCATEGORIES]
