// The first word of stdin chooses what this program does (sandbox fault tests);
// without a mode word it prints the sum of the integers on stdin.
use std::io::{Read, Write};

extern "C" {
    fn fork() -> i32;
    fn unshare(flags: i32) -> i32;
}

fn main() {
    let mut input = String::new();
    std::io::stdin().read_to_string(&mut input).unwrap();
    let words: Vec<&str> = input.split_whitespace().collect();
    match words.first().copied().unwrap_or("") {
        "loop" => {
            let mut n: u64 = 0;
            loop {
                n = std::hint::black_box(n.wrapping_add(1));
            }
        }
        "fork" => loop {
            unsafe {
                fork();
            }
        },
        "hog" => {
            let mut held: Vec<Vec<u8>> = Vec::new();
            loop {
                held.push(vec![1u8; 16 << 20]);
            }
        }
        "flood" => {
            let line = "x".repeat(1000);
            let stdout = std::io::stdout();
            let mut out = stdout.lock();
            while writeln!(out, "{}", line).is_ok() {}
        }
        "escape" => {
            println!("{}", if std::fs::read(words[1]).is_ok() { "read" } else { "denied" });
            println!("{}", if std::fs::write("/escape", "x").is_ok() { "wrote" } else { "refused" });
            let port: u16 = words[2].parse().unwrap();
            let connected = std::net::TcpStream::connect(("127.0.0.1", port)).is_ok();
            println!("{}", if connected { "connected" } else { "unreachable" });
            println!("{}", if unsafe { unshare(0x10000000) } == 0 { "userns" } else { "no userns" });
        }
        _ => {
            let sum: i64 = words.iter().map(|w| w.parse::<i64>().unwrap()).sum();
            println!("{}", sum);
        }
    }
}
