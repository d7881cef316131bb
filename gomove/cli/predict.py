"""``gomove predict``: a model's move probabilities on one position, printed and drawn.

gomove predict GAME.sgf --move 120 --out pred.png      # the shipped model
gomove predict --model RUN/model.pt ARCHIVE.zip --game 3 --move 50
gomove predict --moves "B D4 W Q16 B pass" --size 19

The position is the board before move N of the game (1-based; default: after the
last move), or the empty board with --moves played on it. When the game has a
move N, its rank and probability under the model are printed and it is ringed
on the PNG.
"""

from __future__ import annotations

import sys
from pathlib import Path

from gomove.board.board import BLACK, WHITE, new_board
from gomove.board.coords import gtp_to_loc, loc_to_gtp, move_to_loc
from gomove.board.replay import board_at, play_moves
from gomove.cli import doc_parser
from gomove.cli.model_args import load_model
from gomove.play.predict import plot_prediction
from gomove.reading.games import load_game


def parse_moves(text: str) -> list[tuple[int, str]]:
    """'B D4 W Q16 ...' (or 'D4 Q16 ...', alternating from black) -> [(color, vertex)]."""
    tokens = text.replace(",", " ").split()
    out: list[tuple[int, str]] = []
    colors = {"b": BLACK, "black": BLACK, "w": WHITE, "white": WHITE}
    color = BLACK
    for tok in tokens:
        if tok.lower() in colors:
            color = colors[tok.lower()]
            continue
        out.append((color, tok))
        color = WHITE if color == BLACK else BLACK
    return out


def main(argv: list[str] | None = None) -> None:
    ap = doc_parser("gomove predict", __doc__)
    ap.add_argument("sgf", nargs="?", help="an SGF file, or an archive / folder (see --game)")
    ap.add_argument(
        "--model", metavar="PATH", help="a run's model.pt or a packed .npz (default: shipped)"
    )
    ap.add_argument("--game", type=int, default=0, help="which game of an archive (0-based)")
    ap.add_argument("--move", type=int, default=None, help="before this move (default: the end)")
    ap.add_argument("--moves", help="instead of an SGF: GTP moves from the empty board")
    ap.add_argument("--size", type=int, default=19, help="board size for --moves")
    ap.add_argument("--top", type=int, default=10, help="how many moves to print")
    ap.add_argument("--out", help="write a PNG heatmap of the probabilities here")
    args = ap.parse_args(argv)
    if (args.sgf is None) == (args.moves is None):
        ap.error("give either an SGF (GAME.sgf --move N) or --moves")
    try:
        predictor = load_model(args.model)
        if predictor is None:
            raise ValueError("predicting needs a model (--model none leaves it none)")
        expert = None
        if args.sgf is not None:
            game = load_game(args.sgf, args.game)
            board, to_move = board_at(game, args.move)
            if args.move is not None and args.move <= len(game.moves):
                color, move = game.moves[args.move - 1]
                expert = move_to_loc(move, game.size)
            where = f"{Path(args.sgf).name}, before move {args.move or len(game.moves) + 1}"
        else:
            board = new_board(args.size)
            moves = [(c, gtp_to_loc(v, args.size)) for c, v in parse_moves(args.moves)]
            to_move = play_moves(board, moves)
            where = f"{len(moves)} moves played"
    except (OSError, ValueError) as e:
        sys.exit(f"gomove predict: {e}")
    pred = predictor.predict(board, to_move)
    size = pred.size
    side = "black" if to_move == BLACK else "white"
    print(f"{where}; {side} to move; {len(pred.locs)} candidates ({predictor.name})")
    for i, (vertex, p) in enumerate(pred.top(args.top), 1):
        print(f"{i:3d}. {vertex:>5s} {p:8.4f}")
    if expert is not None:
        rank = pred.rank_of(expert)
        name = loc_to_gtp(expert, size)
        if rank is None:
            print(f"expert move {name}: not a legal candidate")
        else:
            print(f"expert move {name}: rank {rank}, probability {pred.prob_of(expert):.4f}")
    if args.out:
        plot_prediction(board, to_move, pred, args.out, title=where, expert=expert)
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
