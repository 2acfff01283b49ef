package postgres

import (
	"fmt"
	"strings"

	"go.starlark.net/starlark"
)

// settingString renders a Starlark setting value the way postgresql.conf
// wants it: booleans as on/off.
func settingString(v starlark.Value) (string, error) {
	switch v := v.(type) {
	case starlark.String:
		return string(v), nil
	case starlark.Bool:
		if v {
			return "on", nil
		}
		return "off", nil
	case starlark.Int, starlark.Float:
		return v.String(), nil
	}
	return "", fmt.Errorf("a setting must be a string, number or bool, got %s", v.Type())
}

// reservedSettings are always benchbook's, with why: where the cluster
// listens, and what its log keeps of a failing statement (secret.go).
var reservedSettings = map[string]string{
	"port":                    "a private socket dir and a free loopback port",
	"listen_addresses":        "a private socket dir and a free loopback port",
	"unix_socket_directories": "a private socket dir and a free loopback port",
	"log_min_error_statement": "the log never holds a failing statement's text, which may be a CREATE ROLE's password",
}

// settingsDict reads a settings={...} argument.
func settingsDict(d *starlark.Dict) (map[string]string, error) {
	out := map[string]string{}
	if d == nil {
		return out, nil
	}
	for _, kv := range d.Items() {
		k, ok := starlark.AsString(kv[0])
		if !ok {
			return nil, fmt.Errorf("setting names must be strings, got %s", kv[0].Type())
		}
		if why, ok := reservedSettings[strings.ToLower(k)]; ok {
			return nil, fmt.Errorf("%s is benchbook's to choose (%s)", k, why)
		}
		s, err := settingString(kv[1])
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
		if strings.ContainsAny(s, "\n\r\x00") {
			return nil, fmt.Errorf("%s: a setting must be on one line, got %q", k, s)
		}
		out[k] = s
	}
	return out, nil
}
