package runattrs

import "testing"

func TestKnown(t *testing.T) {
	for name, want := range map[string]bool{
		"db_cpu_us_per_req": true, "db_cpu_us": true, "buffers_per_req": true, "walwrite_waiters_max": true,
		"mongo_cmd_find_per_req": true, "mongo_coll_orders_index_bytes": true, "foreign_cpu": true,
		"wait_samples_per_req": false, "nonsense": false, "db_cpu_us_per_req_per_req": false,
	} {
		if Known(name) != want {
			t.Errorf("Known(%q) = %v, want %v", name, !want, want)
		}
	}
	seen := map[string]bool{}
	for _, a := range Observed {
		if seen[a.Name] {
			t.Errorf("%s is listed twice", a.Name)
		}
		seen[a.Name] = true
		if a.Unit == "" || a.Source == "" || a.Means == "" {
			t.Errorf("%s lacks a unit, source or meaning", a.Name)
		}
	}
}
