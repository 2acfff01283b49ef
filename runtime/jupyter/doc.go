// Package jupyter speaks the Jupyter messaging protocol (v5.3) for a kernel.
// It covers the five ZeroMQ sockets a connection file names (shell and
// control ROUTERs, the iopub PUB, the stdin ROUTER, the heartbeat REP),
// HMAC-SHA256 signed messages, and the request loop that answers
// kernel_info, execute, complete, inspect, is_complete, history, interrupt
// and shutdown.
//
// The language lives behind Handler: this package knows no notebook. It
// sends busy/idle around every request, execute_input before an execution,
// numbers executions, evaluates an execution's user_expressions through
// the Handler once it succeeded, keeps the history, aborts the queued
// executions after a failed one that asked to stop on error, and cancels
// the running execution's context on an interrupt (interrupt_request, or
// Kernel.Interrupt for a SIGINT). display.go turns benchbook's output values into MIME
// bundles, so a Handler publishes a table, a figure or a comparison as the
// record shows it.
//
// ZeroMQ is github.com/go-zeromq/zmq4, pure Go: the kernel stays one static
// binary, with no libzmq to install.
package jupyter
