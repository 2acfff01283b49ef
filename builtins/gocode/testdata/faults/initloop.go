package initloop

var ready = spin()

func spin() bool {
	for {
	}
}

func Ready() bool { return ready }
