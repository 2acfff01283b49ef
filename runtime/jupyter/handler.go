package jupyter

import "context"

// Handler is the language side of a kernel. The kernel calls it from one
// goroutine, one request at a time (as a kernel's shell channel is served),
// except that an interrupt cancels the running Execute's context from
// another.
type Handler interface {
	// Info describes the kernel and its language (kernel_info_reply).
	Info() Info
	// Execute runs one execute_request, publishing its outputs through out.
	// A nil error is an "ok" reply. ctx is cancelled by an interrupt and by
	// shutdown.
	Execute(ctx context.Context, req *ExecuteRequest, out *Publisher) *Error
	// Complete lists what completes code at cursor (a rune offset).
	Complete(code string, cursor int) Completion
	// Inspect describes the name at cursor (detail 0 or 1).
	Inspect(code string, cursor, detail int) Inspection
	// IsComplete says whether code is a complete input: "complete",
	// "incomplete" (with the indent of the next line), "invalid" or
	// "unknown".
	IsComplete(code string) (status, indent string)
	// Evaluate evaluates one of an execute_request's user_expressions,
	// after the execution succeeded, to a MIME bundle. It must not change
	// the session's state: an expression, not a statement.
	Evaluate(ctx context.Context, expr string) (data map[string]any, err *Error)
	// Shutdown stops everything the handler started. It is called once,
	// after the running Execute (if any) has returned or a grace period
	// has passed.
	Shutdown()
}

// Info is what kernel_info_reply says besides the protocol version.
type Info struct {
	Implementation        string
	ImplementationVersion string
	Language              LanguageInfo
	Banner                string
	HelpLinks             []HelpLink
}

// LanguageInfo is kernel_info_reply's language_info.
type LanguageInfo struct {
	Name              string `json:"name"`
	Version           string `json:"version"`
	MIMEType          string `json:"mimetype"`
	FileExtension     string `json:"file_extension"`
	PygmentsLexer     string `json:"pygments_lexer,omitempty"`
	CodemirrorMode    string `json:"codemirror_mode,omitempty"`
	NbconvertExporter string `json:"nbconvert_exporter,omitempty"`
}

// HelpLink is one entry of the help menu a frontend shows.
type HelpLink struct {
	Text string `json:"text"`
	URL  string `json:"url"`
}

// ExecuteRequest is an execute_request's content, with what the kernel
// adds: the execution count and the cell identity some frontends send in
// the request's metadata.
type ExecuteRequest struct {
	Code            string            `json:"code"`
	Silent          bool              `json:"silent"`
	StoreHistory    bool              `json:"store_history"`
	UserExpressions map[string]string `json:"user_expressions"`
	AllowStdin      bool              `json:"allow_stdin"`
	StopOnError     bool              `json:"stop_on_error"`

	Count int // this execution's number (In [Count])
	// CellID is the notebook cell the code comes from, when the frontend
	// says (JupyterLab and VS Code send metadata.cellId; nbclient and
	// jupyter console do not): "" otherwise.
	CellID string `json:"-"`
	// DeletedCells are the ids of cells the user deleted since the last
	// request (JupyterLab's metadata.deletedCells).
	DeletedCells []string `json:"-"`
	// Payload, filled by the handler, is the reply's payload (a "page" of
	// help for "name?").
	Payload []any `json:"-"`
}

// executeMetadata is what frontends put in an execute_request's metadata.
type executeMetadata struct {
	CellID       string   `json:"cellId"`
	DeletedCells []string `json:"deletedCells"`
}

// Error is a failed execution: the error message and execute_reply say it.
type Error struct {
	Name      string   `json:"ename"`
	Value     string   `json:"evalue"`
	Traceback []string `json:"traceback"`
}

// Completion is a complete_reply: Matches replace code[CursorStart:CursorEnd]
// (rune offsets).
type Completion struct {
	Matches     []string
	CursorStart int
	CursorEnd   int
}

// Inspection is an inspect_reply: Data is a MIME bundle.
type Inspection struct {
	Found bool
	Data  map[string]any
}
