package typeerror

func Key(i int) string {
	return i + 1
}
