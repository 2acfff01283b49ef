"""The Jupyter project's kernel conformance suite (jupyter_kernel_test)
against benchbook's kernel. Run by TestKernelConformance with Debian's
/usr/bin/python3, JUPYTER_PATH pointing at a kernelspec the test installed.

Every sample below is benchbook input: REPL input (no "# %%" header and no
cell id, as this suite sends), a notebook cell, or a :command.
"""
import unittest

import jupyter_kernel_test


class BenchbookKernelTests(jupyter_kernel_test.KernelTests):
    kernel_name = "benchbook"
    language_name = "starlark"
    file_extension = ".star"

    code_hello_world = 'print("hello, world")'
    # A cell's warnings go to stderr (this one's md() is not its last
    # statement, so nothing shows it).
    code_stderr = '# %% stderr_probe\nmd("lost")\nprobe = 1\n'

    # A failing call: one "error" message, nothing else.
    code_generate_error = 'fail("boom")'
    code_page_something = "workload.http?"

    code_execute_result = [
        {"code": "1 + 2", "result": "3"},
        {"code": '"a" + "b"', "result": '"ab"'},
        {"code": "[x * x for x in range(4)]", "result": "[0, 1, 4, 9]"},
    ]
    code_display_data = [
        {"code": 'show(md("# title"), 2)', "mime": "text/markdown"},
        {"code": 'show(table([{"a": 1}]), 2)', "mime": "text/html"},
    ]

    completion_samples = [
        {"text": "wor", "matches": {"workload"}},
        {"text": "workload.ht", "matches": {"http"}},
        {"text": ":ce", "matches": {":cells"}},
    ]
    complete_code_samples = ["1", "x = 1", "def f():\n    return 1\n\n", ":cells"]
    incomplete_code_samples = ["def f():", "x = [1,", "if True:\n    x = 1"]
    invalid_code_samples = ["1 +* 2", "def (:"]

    code_inspect_sample = "workload.http"
    # test_clear_output is the one test left out: no benchbook code clears a
    # cell's output.

    code_history_pattern = "1 ?*"
    supported_history_operations = ("tail", "range", "search")


if __name__ == "__main__":
    unittest.main()
