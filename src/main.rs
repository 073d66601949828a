fn main() {
    println!("senc");
}
