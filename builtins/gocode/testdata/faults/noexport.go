package noexport

func key() string { return "k" }
