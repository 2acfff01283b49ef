"""Executes a notebook with nbclient (Debian's python3-nbclient), as papermill
and CI pipelines do, with the benchbook kernel; writes the executed notebook
and prints, per code cell, what the kernel said of it: the benchbook outcome
in its execute_reply's metadata (when the cell also shows it: the first line
of its text output, its status display, or its error), and the MIME types
and outputs shown, less that outcome line.

usage: nbclient_run.py IN.ipynb OUT.ipynb [--no-session-name]

With --no-session-name the kernel is not told which notebook it runs (as
Debian's nbconvert and the classic Notebook do not): it finds out itself.
"""
import json
import os
import sys

import nbclient
import nbformat


def outcome_shown(cell, meta):
    """Whether the outcome line shows, and the outputs without it."""
    prefix = meta["status"] + " " + meta["cell"]
    outputs = [dict(o) for o in cell.outputs]
    for i, out in enumerate(outputs):
        if out["output_type"] == "stream" and out["name"] == "stdout" and out["text"].startswith(prefix):
            rest = out["text"].split("\n", 1)[1]
            if rest:
                outputs[i] = dict(out, text=rest)
            else:
                del outputs[i]
            return True, outputs
        if out["output_type"] == "error" and out["traceback"] and out["traceback"][0].startswith(prefix):
            return True, outputs
        data = out.get("data", {})
        if data.get("text/plain", "").startswith(prefix) and out.get("metadata", {}).get("benchbook"):
            del outputs[i]
            return True, outputs
    return False, outputs


def main(src, dest, session_name=True):
    nb = nbformat.read(src, as_version=4)
    if session_name:
        # What jupyter_server tells a kernel: which notebook it serves.
        os.environ["JPY_SESSION_NAME"] = os.path.abspath(src)
    else:
        os.environ.pop("JPY_SESSION_NAME", None)
    replies = {}

    def executed(cell, cell_index, execute_reply):
        replies[cell_index] = execute_reply["metadata"].get("benchbook")

    client = nbclient.NotebookClient(
        nb, kernel_name="benchbook", timeout=240, startup_timeout=60, on_cell_executed=executed,
        resources={"metadata": {"path": os.path.dirname(os.path.abspath(src))}})
    client.execute()
    nbformat.write(nb, dest)
    cells = []
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        meta = replies.get(index)
        statuses, outputs = [], [dict(o) for o in cell.outputs]
        if meta:
            shown, outputs = outcome_shown(cell, meta)
            if shown:
                statuses.append(meta)
        mimes = []
        for out in outputs:
            mimes.extend(sorted(out.get("data", {})))
            if out["output_type"] == "stream":
                mimes.append("stream:" + out["name"])
        # What the cell shows; the metadata says hit or ran, which differs.
        shown_outputs = [{k: v for k, v in o.items() if k not in ("execution_count", "metadata")} for o in outputs]
        cells.append({"id": cell.id, "status": statuses, "mimes": mimes, "outputs": shown_outputs})
    json.dump(cells, sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], "--no-session-name" not in sys.argv[3:])
