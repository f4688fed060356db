"""A small target list of common English words (every one in GloVe 6B's vocabulary): 20
targets, each with its related words (the first three ``positive``, the rest ``distractor``)
and unrelated ones from a shared pool (``random``) up to its size, 10 to 40 candidates."""

from __future__ import annotations

import random

__all__ = ["SIZES", "THEMES", "target_list"]

THEMES: dict[str, list[str]] = {
    "cat": ["kitten", "feline", "pet", "dog", "mouse", "tiger", "lion", "fur", "whiskers", "paw",
            "purr", "kitty", "puppy", "animal", "claws"],
    "doctor": ["physician", "nurse", "hospital", "patient", "surgeon", "medicine", "clinic",
               "health", "illness", "treatment", "disease", "medical", "dentist", "surgery"],
    "bread": ["loaf", "flour", "bakery", "baker", "butter", "toast", "wheat", "dough", "sandwich",
              "cheese", "oven", "cake", "yeast", "breakfast"],
    "car": ["vehicle", "truck", "driver", "engine", "road", "wheel", "bus", "motor", "highway",
            "garage", "tire", "fuel", "taxi", "traffic"],
    "music": ["song", "musical", "band", "guitar", "piano", "singer", "jazz", "concert", "album",
              "melody", "rhythm", "orchestra", "composer", "dance"],
    "river": ["stream", "lake", "water", "creek", "bank", "valley", "bridge", "flood", "delta",
              "canal", "fish", "boat", "shore", "ocean"],
    "money": ["cash", "dollar", "finance", "bank", "pay", "wealth", "income", "coin", "budget",
              "loan", "profit", "price", "tax", "salary"],
    "school": ["student", "teacher", "classroom", "college", "class", "education", "university",
               "pupil", "lesson", "exam", "homework", "library"],
    "winter": ["snow", "cold", "season", "summer", "autumn", "ice", "frost", "december", "spring",
               "christmas", "skiing", "freezing"],
    "computer": ["software", "hardware", "laptop", "keyboard", "internet", "program", "data",
                 "screen", "digital", "processor", "technology", "chip"],
    "king": ["queen", "prince", "throne", "royal", "crown", "kingdom", "monarch", "emperor",
             "palace", "knight", "castle", "lord"],
    "war": ["battle", "army", "conflict", "soldier", "fighting", "military", "weapons", "peace",
            "troops", "invasion", "enemy", "violence"],
    "ocean": ["sea", "atlantic", "pacific", "waves", "marine", "coast", "beach", "island", "whale",
              "shark", "tide", "salt"],
    "coffee": ["tea", "espresso", "cafe", "milk", "sugar", "beans", "drink", "cup", "caffeine",
               "breakfast", "mug", "chocolate"],
    "garden": ["flower", "plant", "gardening", "tree", "soil", "vegetable", "grass", "seeds",
               "roses", "backyard", "park", "fruit"],
    "city": ["town", "urban", "downtown", "village", "capital", "metropolitan", "street",
             "suburb", "municipal", "mayor", "population", "neighborhood"],
    "book": ["novel", "author", "publisher", "read", "library", "page", "story", "chapter",
             "writer", "magazine", "poem", "literature"],
    "sun": ["sunlight", "moon", "solar", "star", "sky", "light", "heat", "planet", "earth",
            "bright", "sunshine", "warm"],
    "phone": ["telephone", "mobile", "cellphone", "call", "wireless", "phones", "message",
              "text", "smartphone", "dial", "ring", "voice"],
    "food": ["meal", "eat", "cooking", "restaurant", "meat", "diet", "dinner", "rice", "kitchen",
             "hunger", "nutrition", "vegetables"],
}  # fmt: skip

POOL = ["invoice", "telescope", "carpet", "umbrella", "volcano", "pencil", "theorem", "tractor",
        "envelope", "senator", "glacier", "violin", "helmet", "algebra", "harbor", "cactus",
        "ladder", "marble", "parliament", "sock", "jacket", "tunnel", "lemon", "candle", "mirror",
        "hammer", "ribbon", "saddle", "rocket", "wallet", "vinegar", "pillow", "anchor",
        "compass", "diamond", "elephant", "feather", "galaxy", "hockey", "kettle", "lantern",
        "magnet", "needle", "orbit", "parrot", "quilt", "radar", "spoon", "tomato", "uniform",
        "vase", "walnut", "yacht", "zebra", "bicycle", "cabinet", "dolphin"]  # fmt: skip

SIZES = [10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30, 32, 34, 36, 38, 40, 11, 17, 23, 29]


def target_list(seed: int = 7) -> str:
    """The list as ``target,candidate,kind`` CSV (seeded: the same file every run)."""
    rng = random.Random(seed)
    rows = ["target,candidate,kind"]
    for (target, related), size in zip(THEMES.items(), SIZES, strict=True):
        mine = related[:size]
        unrelated = [w for w in POOL if w not in mine and w != target]
        rng.shuffle(unrelated)
        for k, word in enumerate(mine):
            rows.append(f"{target},{word},{'positive' if k < 3 else 'distractor'}")
        rows += [f"{target},{word},random" for word in unrelated[: size - len(mine)]]
    return "\n".join(rows) + "\n"
