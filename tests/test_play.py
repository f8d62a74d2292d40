"""`tablebase play`: the computer answers with best moves, bad entries are refused, the sides
are named, values can be hidden and a hint asked for, and the game ends in a summary."""

from __future__ import annotations

import io
import re
import subprocess
import sys
from pathlib import Path

from pipeline.products.play import Outcome, Played, play
from pipeline.products.probe import probe

ROOT = Path(__file__).resolve().parent.parent

PLY = re.compile(r"^ply (\d+)  (\S+)  (you|computer) to move: (.+)$")
COMPUTER = re.compile(r"^computer plays (.+) -> (\S+)$")


def tablebase_play(data: Path, *args: str, stdin: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "pipeline", "play", *args, "--data", str(data)],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )


def headline(transcript: str) -> str:
    """The line that says how the game ended."""
    return next(
        line
        for line in transcript.splitlines()
        if line.startswith(("game over after", "game abandoned", "stopped after"))
    )


def computer_moves(transcript: str) -> list[tuple[str, str]]:
    """(position before, move label) of every move the computer made."""
    moves, position = [], None
    for line in transcript.splitlines():
        if match := PLY.match(line):
            position = match.group(2)
        elif match := COMPUTER.match(line):
            moves.append((position, match.group(1)))
    return moves


def best_line(ruleset: str, data: Path, plies: int) -> list[str]:
    """The move labels of `plies` plies where both sides always play the best move."""
    position = probe(ruleset, "1-1|1-1", data).position
    labels = []
    for _ in range(plies):
        result = probe(ruleset, position, data)
        if not result.moves:
            break
        labels.append(result.moves[0].move)
        position = result.moves[0].position
    return labels


def test_the_computer_only_plays_best_moves_and_wins_a_won_game(built):
    # chopsticks is lost for the first player: whatever the user does, the computer wins.
    result = tablebase_play(built, "chopsticks", stdin="1\n" * 40)
    assert result.returncode == 0, result.stderr
    moves = computer_moves(result.stdout)
    assert moves
    for position, label in moves:
        answer = probe("chopsticks", position, built)
        chosen = next(move for move in answer.moves if move.move == label)
        best = answer.moves[0]
        assert (chosen.value, chosen.remoteness) == (best.value, best.remoteness), (position, label)
    assert headline(result.stdout).endswith(": the computer wins.")


def test_as_second_the_computer_moves_first_and_best_play_beats_it(built):
    line = best_line("chopsticks", built, 20)
    assert len(line) == 8  # the start is a loss in 8 for the first player
    user_moves = line[1::2]  # the computer makes plies 0, 2, 4, 6
    result = tablebase_play(built, "chopsticks", "--as", "second", stdin="\n".join(user_moves) + "\n")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    first_ply = next(i for i, text in enumerate(lines) if text.startswith("ply 0"))
    assert "computer to move: you win in 8 plies" in lines[first_ply]
    assert lines[first_ply + 1] == "  the computer 1-1, you 1-1"
    assert lines[first_ply + 2] == f"computer plays {line[0]} -> 1-2|1-1"
    assert not any("your move>" in text for text in lines[: first_ply + 3])
    assert headline(result.stdout) == "game over after 8 plies: you win."


def test_bad_entries_are_refused_and_the_prompt_comes_again(built):
    result = tablebase_play(built, "chopsticks", stdin="banana\n0\n99\n1 hits 7\n\n1\nquit\n")
    assert result.returncode == 0 and result.stderr == ""
    complaints = [text for text in result.stdout.splitlines() if "not a move here" in text]
    assert len(complaints) == 5
    assert result.stdout.count("your move>") == 7
    assert "you play 1 hits 1 -> 1-2|1-1" in result.stdout
    assert headline(result.stdout) == "game abandoned after 2 plies."


def test_end_of_input_ends_the_game_cleanly(built):
    result = tablebase_play(built, "chopsticks", stdin="")
    assert result.returncode == 0 and result.stderr == ""
    assert result.stdout.splitlines()[-1] == "game abandoned after 0 plies."


def test_a_bad_side_is_one_line_error(built):
    result = tablebase_play(built, "chopsticks", "--as", "third", stdin="")
    assert result.returncode == 2  # a malformed command line
    assert result.stderr.strip().splitlines() == [
        "error: invalid value for '--as': 'third' is not one of 'first', 'second': see `tablebase play --help`"
    ]


def test_a_move_can_be_named_by_the_position_it_leads_to(built):
    out = io.StringIO()
    # 2-1|1-1 is 1-2|1-1 written unsorted: the position after 1 hits 1.
    outcome = play("chopsticks", built, stdin=io.StringIO("2-1|1-1\nquit\n"), stdout=out)
    assert "you play 1 hits 1 -> 1-2|1-1" in out.getvalue()
    assert outcome.ended == "quit" and outcome.plies == 2


def test_a_move_label_is_read_whatever_its_case_and_spacing(built):
    out = io.StringIO()
    outcome = play("chopsticks", built, stdin=io.StringIO("  1  HITS 1 \nquit\n"), stdout=out)
    assert "you play 1 hits 1 -> 1-2|1-1" in out.getvalue()
    assert outcome.ended == "quit" and outcome.plies == 2


def test_a_drawn_game_stops_at_the_ply_limit(built):
    ruleset = "chopsticks:overflow=rollover"  # a draw: best play never ends
    line = best_line(ruleset, built, 6)
    out = io.StringIO()
    outcome = play(ruleset, built, stdin=io.StringIO("\n".join(line[0::2]) + "\n"), stdout=out, max_plies=6)
    assert outcome == Outcome(None, 6, "limit", outcome.position, outcome.moves)
    assert len(outcome.moves) == 6
    assert (
        "stopped after 6 plies, the limit, you to move: a draw (neither player can force the game to end)."
        in out.getvalue()
    )


def test_every_ply_says_which_hands_are_yours_and_which_the_computers(built):
    out = io.StringIO()
    play("chopsticks", built, stdin=io.StringIO("1\nquit\n"), stdout=out)
    lines = out.getvalue().splitlines()
    # positions are written mover|opponent: the hands swap places every ply
    assert (
        lines[lines.index("ply 0  1-1|1-1  you to move: the computer wins in 8 plies") + 1]
        == "  you 1-1, the computer 1-1"
    )
    ply1 = next(i for i, line in enumerate(lines) if line.startswith("ply 1  1-2|1-1  computer to move"))
    assert lines[ply1 + 1] == "  the computer 1-2, you 1-1"


def test_heaps_have_no_sides_to_label(built):
    out = io.StringIO()
    play("sticks:rows=2", built, stdin=io.StringIO("quit\n"), stdout=out)
    assert not any(
        line.startswith("  you ") or "the computer " in line.split(":")[0] for line in out.getvalue().splitlines()
    )


def test_a_game_starts_from_the_position_given_and_a_hint_names_the_winning_move(built):
    out = io.StringIO()
    # 1-3|2-0 is 1-3|0-2 unsorted: the mover's 3 knocks out the opponent's last hand
    outcome = play("chopsticks", built, start="1-3|2-0", stdin=io.StringIO("hint\n3 hits 2\n"), stdout=out)
    text = out.getvalue()
    assert text.startswith("chopsticks: you play first from 1-3|0-2;")
    assert "hint: 3 hits 2 -> 0-0|1-3: you win in 1 ply" in text.splitlines()
    assert outcome == Outcome("you", 1, "over", "0-0|1-3", (Played("you", "3 hits 2", "1-3|0-2", "0-0|1-3"),))


def test_start_names_the_start_position_in_any_case(built):
    outcome = play("chopsticks", built, start="START", stdin=io.StringIO(""), stdout=io.StringIO())
    assert outcome.position == "1-1|1-1"


def test_hidden_values_stay_hidden_until_the_game_ends(built):
    out = io.StringIO()
    line = best_line("chopsticks", built, 20)
    play(
        "chopsticks",
        built,
        human_first=False,
        show_values=False,
        stdin=io.StringIO("\n".join(line[1::2]) + "\n"),
        stdout=out,
    )
    lines = out.getvalue().splitlines()
    end = lines.index("game over after 8 plies: you win.")
    assert not any(re.search(r"\b(win|wins|loss|tie|draw) in \d", text) for text in lines[:end])
    assert next(text for text in lines if text.startswith("ply ")) == "ply 0  1-1|1-1  computer to move"


def test_the_summary_lists_every_move_played_in_order(built):
    line = best_line("chopsticks", built, 20)
    out = io.StringIO()
    play("chopsticks", built, human_first=False, stdin=io.StringIO("\n".join(line[1::2]) + "\n"), stdout=out)
    lines = out.getvalue().splitlines()
    summary = lines[lines.index("game over after 8 plies: you win.") + 1 :]
    assert summary[0] == "the moves, from 1-1|1-1:"
    rows = [re.match(r"^ +(\d+)\. (you|the computer) +(.+?)  -> (\S+)$", text).groups() for text in summary[1:]]
    assert [int(number) for number, *_ in rows] == list(range(1, 9))
    assert [who for _, who, _, _ in rows] == ["the computer", "you"] * 4
    assert [move for _, _, move, _ in rows] == line


def test_a_malformed_or_unknown_start_is_one_line_error(built):
    result = tablebase_play(built, "chopsticks", "--from", "1-1|9-9", stdin="")
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr.splitlines() == [
        "error: impossible chopsticks position '1-1|9-9': a hand holds at most 4 fingers"
    ], result.stderr
    result = tablebase_play(built, "sticks:rows=2", "--from", "3-3", stdin="")
    assert result.returncode == 1 and result.stderr.strip() == "error: '3-3' is not a position of sticks:rows=2"
