// Command gen prints the engine benchmark's notebook.
package main

import (
	"fmt"

	"github.com/benchbook/benchbook/bench/engine"
)

func main() { fmt.Print(engine.Notebook(30, 20)) }
