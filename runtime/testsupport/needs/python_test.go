package needs

import "testing"

// Under CI the Jupyter packages the kernel's tests use are installed.
func TestCIHasJupyter(t *testing.T) {
	if !CI() {
		t.Skip("checks CI's machine (CI=true)")
	}
	PythonModules(t, "python3-jupyter-kernel-test python3-nbclient python3-nbformat", "jupyter_kernel_test", "nbclient", "nbformat")
	Command(t, "jupyter-console", "jupyter-console")
	Command(t, "tmux", "tmux")
}
