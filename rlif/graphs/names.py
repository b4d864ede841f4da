"""Seeded generators of entity names: people (MCP/MIS/MVC) and airport codes (TSP).

GraphArena shows real names (DBLP authors, social-network users, IATA codes). We cannot ship those, so names are
drawn from small built-in syllable and name lists with the instance's own ``random.Random``: the same seed gives
the same names, and nothing is downloaded. A few names carry accents, hyphens or middle initials because real
author lists do, and exact string matching of such names is part of what the model must get right.
"""

from __future__ import annotations

import random
import string


def _words(text: str) -> tuple[str, ...]:
    return tuple(text.split())


_FIRST = _words(
    "Aaliyah Adrian Aiko Alejandro Amara Anders Anika Arjun Astrid Aylin Beatriz Benedikt Bilal Bronwyn "
    "Camille Carlos Chen Chiara Dariusz Deepa Diego Dmitri Elif Elena Emeka Esther Fatima Felix Freya Gabriel "
    "Grace Hana Hamid Hugo Ibrahim Ines Ingrid Isabel Jamal Javier Jin Joanna Jonas Julia Kai Kamala Keiko "
    "Kenji Lars Laura Leila Liam Lucia Magnus Malik Maria Mateo Mei Mikhail Nadia Naomi Nikhil Noor Olga Omar "
    "Oscar Paolo Priya Rafael Rania Ravi Rosa Ruth Samuel Sana Santiago Sofia Sven Tariq Thomas Tomasz Umar "
    "Valentina Vera Wei Yara Yusuf Zainab Zoltan Zoe"
)
_LAST = _words(
    "Abara Achterberg Adeyemi Alvarez Andersen Bauer Becker Bianchi Brennan Castillo Chandra Chowdhury Costa "
    "Dahl Delgado Dubois Eriksen Fischer Fontaine Fujita Gallagher Garcia Gupta Haddad Hansen Hoffmann Horvat "
    "Ibarra Ivanova Jansen Jovanovic Kaur Kawasaki Keller Kim Kowalski Kruger Larsen Lefebvre Lindqvist Lopez "
    "Marino Martens Mendes Moreau Murphy Nakamura Nguyen Novak Nowak Okafor Olsen Ortiz Park Patel Petrov "
    "Quispe Ramos Rao Reyes Rossi Sato Schmidt Silva Singh Sokolov Suzuki Takahashi Tanaka Torres Vargas "
    "Varga Wagner Walsh Weber Wong Yamamoto Yilmaz Zhang Zhou Zimmermann"
)
_ACCENTED_LAST = ("Schmidt-Schauß", "Müller", "Nuñez", "Gonçalves", "Østergaard", "Dvořák", "Łukasiewicz", "Sørensen")


def person_name(rng: random.Random) -> str:
    """One person's name: first + last, sometimes with a middle initial, a double-barrelled or accented surname."""
    first = rng.choice(_FIRST)
    roll = rng.random()
    if roll < 0.06:
        last = rng.choice(_ACCENTED_LAST)
    elif roll < 0.12:
        last = f"{rng.choice(_LAST)}-{rng.choice(_LAST)}"
    else:
        last = rng.choice(_LAST)
    if rng.random() < 0.12:
        return f"{first} {rng.choice(string.ascii_uppercase)}. {last}"
    return f"{first} {last}"


def person_names(rng: random.Random, count: int) -> tuple[str, ...]:
    """``count`` distinct person names.

    Raises:
        ValueError: ``count`` is larger than the generator can make distinct names for in reasonable time.
    """
    if count > 2000:
        raise ValueError(f"count: at most 2000 distinct names per instance, asked for {count}")
    names: list[str] = []
    seen: set[str] = set()
    while len(names) < count:
        name = person_name(rng)
        if name not in seen:
            seen.add(name)
            names.append(name)
    return tuple(names)


def airport_codes(rng: random.Random, count: int) -> tuple[str, ...]:
    """``count`` distinct IATA-like three-letter upper-case codes.

    Raises:
        ValueError: ``count`` exceeds the 17,576 possible codes.
    """
    if count > 26**3:
        raise ValueError(f"count: at most {26**3} three-letter codes, asked for {count}")
    codes: list[str] = []
    seen: set[str] = set()
    while len(codes) < count:
        code = "".join(rng.choice(string.ascii_uppercase) for _ in range(3))
        if code not in seen:
            seen.add(code)
            codes.append(code)
    return tuple(codes)
