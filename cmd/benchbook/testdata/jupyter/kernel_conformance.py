"""The Jupyter project's kernel conformance suite (jupyter_kernel_test)
against benchbook's kernel. Run by TestKernelConformance with Debian's
/usr/bin/python3, JUPYTER_PATH pointing at a kernelspec the test installed.

Every sample below is benchbook input: REPL input (no "# %%" header and no
cell id, as this suite sends), a notebook cell, or a :command; the suite
runs twice, the second time with every sample that can be a notebook cell
("# %% NAME") sent as one. The last line
printed is a JSON summary: the tests the installed suite offers, how many
ran, and every skip, failure and error, subtests included.
"""
import json
import sys
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
    code_clear_output = ":clear"

    code_history_pattern = "1 ?*"
    supported_history_operations = ("tail", "range", "search")


class BenchbookCellTests(BenchbookKernelTests):
    """The same tests with every sample that can be one a notebook cell
    ("# %% NAME" headed, as a notebook made by benchbook convert sends
    them): a cell's outcome line must not stand in the way of what the
    suite looks for (the only output of a failing cell is its error; every
    display_data of a displaying cell is the display)."""

    code_hello_world = '# %% hello\nprint("hello, world")'
    # A cell the first pass ran is a hit in this one (same folder, same
    # cache), and a hit does not run, so warns of nothing: another cell.
    code_stderr = '# %% stderr_cell\nmd("lost")\nprobe_cell = 1\n'
    code_generate_error = '# %% boom\nfail("boom")'
    code_execute_result = [
        {"code": "# %% r1\n1 + 2", "result": "3"},
        {"code": '# %% r2\n"a" + "b"', "result": '"ab"'},
        {"code": "# %% r3\n[x * x for x in range(4)]", "result": "[0, 1, 4, 9]"},
    ]
    code_display_data = [
        {"code": '# %% d1\nshow(md("# title"), 2)', "mime": "text/markdown"},
        {"code": '# %% d2\nshow(table([{"a": 1}]), 2)', "mime": "text/html"},
        {"code": '# %% d3\nshow(plot.bars([{"name": "a", "before": 1.0, "after": 2.0}]), 2)', "mime": "image/svg+xml"},
    ]
    code_history_pattern = "# %% r1*"


class Result(unittest.TextTestResult):
    """Counts what ran and what was skipped, subtests included (a subtest
    that raises SkipTest is a skip the -v lines do not show as one)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.passed_subtests = 0

    def addSubTest(self, test, subtest, err):
        super().addSubTest(test, subtest, err)
        if err is None:
            self.passed_subtests += 1


def main():
    loader = unittest.TestLoader()
    classes = [BenchbookKernelTests, BenchbookCellTests]
    suite = unittest.TestSuite([loader.loadTestsFromTestCase(c) for c in classes])
    # The tests the installed suite offers: every test_ method of its base
    # class, however many a newer version has.
    offered = sorted(loader.getTestCaseNames(jupyter_kernel_test.KernelTests))
    runner = unittest.TextTestRunner(verbosity=2, resultclass=Result, stream=sys.stderr)
    result = runner.run(suite)
    print(json.dumps({
        "version": jupyter_kernel_test.__version__,
        "offered": offered,
        "classes": [c.__name__ for c in classes],
        "run": result.testsRun,
        "passed_subtests": result.passed_subtests,
        "skipped": [f"{test.id()}: {reason}" for test, reason in result.skipped],
        "failures": [f"{test.id()}: {tb}" for test, tb in result.failures],
        "errors": [f"{test.id()}: {tb}" for test, tb in result.errors],
    }))
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
