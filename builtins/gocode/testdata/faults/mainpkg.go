package main

func Key() string { return "k" }

func main() {}
