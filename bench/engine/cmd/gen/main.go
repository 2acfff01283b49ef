// Command gen prints the notebook that bench/engine benchmarks. It is a
// chain of -cells code cells (default 30), every third showing a table of
// -rows rows.
package main

import (
	"flag"
	"fmt"

	"github.com/benchbook/benchbook/bench/engine"
)

func main() {
	cells := flag.Int("cells", 30, "code cells in the chain")
	rows := flag.Int("rows", 20, "rows of each table")
	flag.Parse()
	fmt.Print(engine.Notebook(*cells, *rows))
}
