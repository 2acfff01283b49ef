package runtime

import (
	"fmt"
	"path/filepath"

	"github.com/benchbook/benchbook/runtime/redact"
)

// A cell's listing is masked with every secret the redactor knows, and
// some are known only once the cell has run: a password a cell builds from
// pieces and hands to pg.exec, a token another cell puts in a header at
// run time. A record rendered later from the cache alone (render, cells,
// index, a run whose cells are all hits) has not run them, so it shows the
// listing as the last run that knew more showed it: listingsFile keeps
// each cell's listing masked, beside the hash of the source it was made
// from, and a cell whose source is unchanged is shown from it, masked
// again with what is known now. Nothing of a secret is kept (not even a
// hash to try passwords against), only the text without it; masks
// accumulate until the cell's source changes.
const listingsFile = "listings.json"

type listing struct {
	Src   string `json:"src"`   // hash of the cell's source
	Shown string `json:"shown"` // its listing, masked
}

func (e *Engine) listingsPath() string { return filepath.Join(e.store.dir, listingsFile) }

func (e *Engine) loadListings() map[string]listing {
	m := map[string]listing{}
	if err := readChecked(e.listingsPath(), &m); err != nil || m == nil {
		return map[string]listing{}
	}
	return m
}

// shownBody is a cell's source as a record shows it.
func (e *Engine) shownBody(c *CellDef) string {
	if l, ok := e.listings[c.Name]; ok && l.Src == hashString(c.Body) {
		return redact.String(l.Shown)
	}
	return redact.String(c.Body)
}

// saveListings keeps the notebook's listings as shown now.
func (e *Engine) saveListings() {
	m := map[string]listing{}
	for _, c := range e.NB.Cells {
		m[c.Name] = listing{Src: hashString(c.Body), Shown: e.shownBody(c)}
	}
	e.listings = m
	if err := writeChecked(e.listingsPath(), m); err != nil {
		e.warn(fmt.Sprintf("listings not saved: %v", err))
	}
}
