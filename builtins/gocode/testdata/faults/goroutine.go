package goroutine

func Start() int {
	done := make(chan int)
	go func() { done <- 1 }()
	return <-done
}
