package syntax

func Key(i int) string {
	return "k" +
}
