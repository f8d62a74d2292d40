"""Take-away: a pile of tokens; a move takes 1 to `take` of them; who takes the last wins.

An example of a game plug-in written the simple way: one position at a time. The
pipeline enumerates, solves, verifies and publishes it like any built-in game; the
theory says the player to move loses exactly when the pile is a multiple of take + 1.
"""

from pipeline.games.simple import SimpleGame
from pipeline.params import ChoiceParam, IntParam


class Takeaway(SimpleGame):
    name = "takeaway"
    summary = "take 1 to `take` tokens from one pile; who takes the last one wins (an example plug-in)"
    impartial = True
    params = (
        IntParam("tokens", "21", "tokens in the pile at the start", minimum=1, maximum=1_000_000),
        IntParam("take", "3", "most tokens one move takes", minimum=1, maximum=1_000),
        ChoiceParam(
            "play", "normal", "normal: who takes the last token wins; misere: loses", choices=("normal", "misere")
        ),
    )

    def initial(self, rules):
        return rules["tokens"]

    def moves(self, rules, pile):
        return [(f"take {n}", pile - n) for n in range(1, min(rules["take"], pile) + 1)]

    def outcome(self, rules, pile):
        # no token left: the previous player took the last one
        return "loss" if rules["play"] == "normal" else "win"

    def text(self, rules, pile):
        return str(pile)

    def parse(self, rules, text):
        text = text.strip()
        if not (text.isascii() and text.isdigit() and len(text) <= 9):
            raise ValueError("expected the number of tokens in the pile, e.g. 12")
        return int(text)

    def rank(self, rules, pile):
        return pile  # every move takes at least one token


GAME = Takeaway()
