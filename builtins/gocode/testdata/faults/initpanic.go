package initpanic

var table = build()

func build() []int {
	panic("no table")
}

func Get(i int) int { return table[i] }
