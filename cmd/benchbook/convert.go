package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/benchbook/benchbook/runtime"
	"github.com/benchbook/benchbook/runtime/ipynb"
	"github.com/benchbook/benchbook/runtime/limits"
)

func cmdConvert(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	flags := newFlagSet("convert", "Converts a notebook between benchbook's text format (.star, Jupytext's percent\nformat) and Jupyter's .ipynb (nbformat 4), keeping every cell, its name, its\noptions and the Markdown; converted back unedited, a .star is byte for byte\nwhat it was. Outputs are not converted: a .star has none (the cache keeps\nthem). An existing output file is kept unless -force.")
	to := flags.String("to", "", "ipynb or star (default: the other format of the input)")
	out := flags.String("o", "", "output path (default: the input's path with the new extension)")
	force := flags.Bool("force", false, "overwrite an existing output file")
	path, err := parseArgs(flags, args, stderr)
	if err != nil {
		return err
	}
	ext := strings.ToLower(filepath.Ext(path))
	if *to == "" {
		*to = map[string]string{".star": "ipynb", ".ipynb": "star", ".py": "ipynb"}[ext]
	}
	if *to != "ipynb" && *to != "star" {
		return usageError{fmt.Sprintf("-to %q: want ipynb or star", *to)}
	}
	src, err := limits.ReadFile(path, limits.File)
	if err != nil {
		return err
	}
	var data []byte
	if *to == "ipynb" {
		nb := ipynb.FromPercent(src)
		nb.SetName(strings.TrimSuffix(filepath.Base(path), filepath.Ext(path)))
		data, err = ipynb.Marshal(nb)
	} else {
		data, err = toStar(path, src, stderr)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	dest := outputPath(path, *out, "."+*to)
	if err := writeNew(dest, data, *force); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s\n", dest)
	return nil
}

// toStar converts an ipynb and warns when the result does not parse as a
// notebook yet (a name defined twice, a syntax error): it is written all
// the same, nothing of it lost.
func toStar(path string, src []byte, stderr io.Writer) ([]byte, error) {
	nb, err := ipynb.Unmarshal(src)
	if err != nil {
		return nil, err
	}
	star := ipynb.ToPercent(nb)
	if _, err := runtime.Parse(strings.TrimSuffix(path, filepath.Ext(path))+".star", star); err != nil {
		fmt.Fprintf(stderr, "warning: the converted notebook does not run as it is: %v\n", err)
	}
	return star, nil
}

// writeNew writes data to path atomically, refusing to replace a file
// unless force: an .ipynb holds outputs a conversion would drop.
func writeNew(path string, data []byte, force bool) error {
	if _, err := os.Stat(path); err == nil && !force {
		return fmt.Errorf("%s exists (its outputs would be lost): -force replaces it, -o writes elsewhere", path)
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
