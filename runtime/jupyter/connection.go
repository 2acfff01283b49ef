package jupyter

import (
	"encoding/json"
	"fmt"
	"os"
)

// Connection is a kernel's connection file, as the client wrote it.
type Connection struct {
	Transport       string `json:"transport"` // "tcp" or "ipc"
	IP              string `json:"ip"`
	ShellPort       int    `json:"shell_port"`
	IOPubPort       int    `json:"iopub_port"`
	StdinPort       int    `json:"stdin_port"`
	ControlPort     int    `json:"control_port"`
	HBPort          int    `json:"hb_port"`
	Key             string `json:"key"`              // HMAC key; "" disables signing
	SignatureScheme string `json:"signature_scheme"` // "hmac-sha256"
	KernelName      string `json:"kernel_name"`
}

// ReadConnection reads and checks a connection file.
func ReadConnection(path string) (*Connection, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("connection file: %w", err)
	}
	var c Connection
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("connection file %s: %w", path, err)
	}
	if c.Transport == "" {
		c.Transport = "tcp"
	}
	if c.Transport != "tcp" && c.Transport != "ipc" {
		return nil, fmt.Errorf("connection file %s: transport %q: want tcp or ipc", path, c.Transport)
	}
	if c.SignatureScheme != "" && c.SignatureScheme != "hmac-sha256" {
		return nil, fmt.Errorf("connection file %s: signature scheme %q: only hmac-sha256 is supported", path, c.SignatureScheme)
	}
	for name, p := range map[string]int{"shell_port": c.ShellPort, "iopub_port": c.IOPubPort, "stdin_port": c.StdinPort, "control_port": c.ControlPort, "hb_port": c.HBPort} {
		if p <= 0 || p > 65535 {
			return nil, fmt.Errorf("connection file %s: %s %d is not a port", path, name, p)
		}
	}
	return &c, nil
}

// endpoint is the ZeroMQ address of one socket: tcp://IP:PORT, or for ipc
// the path jupyter_client makes, IP-PORT.
func (c *Connection) endpoint(port int) string {
	if c.Transport == "ipc" {
		return fmt.Sprintf("ipc://%s-%d", c.IP, port)
	}
	return fmt.Sprintf("tcp://%s:%d", c.IP, port)
}
