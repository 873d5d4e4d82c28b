// The first word of stdin chooses what this program does (sandbox fault tests);
// without a mode word it prints the sum of the integers on stdin. With
// arguments, it prints the files they name (as a testlib checker reads them).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

int main(int argc, char** argv) {
    if (argc > 1) {
        for (int i = 1; i < argc; ++i) std::cout << std::ifstream(argv[i]).rdbuf();
        return 0;
    }
    std::vector<std::string> words;
    for (std::string word; std::cin >> word;) words.push_back(word);
    const std::string mode = words.empty() ? "" : words[0];
    if (mode == "loop") {
        volatile unsigned long n = 0;
        for (;;) n = n + 1;
    }
    if (mode == "fork") {
        for (;;) fork();
    }
    if (mode == "hog") {
        std::vector<char*> held;
        for (;;) {
            char* block = new char[16 << 20];
            std::memset(block, 1, 16 << 20);
            held.push_back(block);
        }
    }
    if (mode == "flood") {
        const std::string line(1000, 'x');
        for (;;) std::cout << line << '\n';
    }
    if (mode == "escape") {
        std::ifstream secret(words[1]);
        std::cout << (secret.good() ? "read" : "denied") << std::endl;
        std::ofstream escape("/escape");
        escape << "x" << std::flush;
        std::cout << (escape.good() ? "wrote" : "refused") << std::endl;
        int s = socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in address{};
        address.sin_family = AF_INET;
        address.sin_port = htons(static_cast<uint16_t>(std::stoi(words[2])));
        address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        bool connected = connect(s, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
        std::cout << (connected ? "connected" : "unreachable") << std::endl;
        std::cout << (unshare(CLONE_NEWUSER) == 0 ? "userns" : "no userns") << std::endl;
        return 0;
    }
    long long sum = 0;
    for (const auto& word : words) sum += std::stoll(word);
    std::cout << sum << '\n';
}
