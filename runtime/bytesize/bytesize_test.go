package bytesize

import "testing"

func TestParseIsDockers(t *testing.T) {
	for in, want := range map[string]int64{
		"64MB": 64 << 20, "64mb": 64 << 20, "64m": 64 << 20, "64MiB": 64 << 20, "64 MB": 64 << 20,
		"4GB": 4 << 30, "4g": 4 << 30, "1.5GiB": 3 << 29, "1kB": 1024, "1KB": 1024, "2k": 2048,
		"1TB": 1 << 40, "1000": 1000, "1000B": 1000, "1.5 KiB": 1536, "1000TB": 1000 << 40, "0": 0, "0.5MB": 1 << 19,
	} {
		if got, err := Parse(in); err != nil || got != want {
			t.Errorf("Parse(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "lots", "-1MB", "MB", "1e3MB", "0x10", "NaN", "1ib", "1 000", "99999999999TB"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) accepted", bad)
		}
	}
}

func TestFormatReadsBack(t *testing.T) {
	for n, want := range map[int64]string{64 << 20: "64MB", 1 << 30: "1GB", 900: "900B", 1536: "1.5kB", 851_755_008: "812.3MB", 3 << 40: "3TB"} {
		got := Format(n)
		if got != want {
			t.Errorf("Format(%d) = %q, want %q", n, got, want)
		}
		back, err := Parse(got)
		if err != nil || float64(back) < float64(n)*0.999 || float64(back) > float64(n)*1.001 {
			t.Errorf("Parse(Format(%d)) = %d, %v", n, back, err)
		}
	}
}
