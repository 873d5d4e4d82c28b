// The first word of stdin chooses what this program does (sandbox fault tests);
// without a mode word it prints the sum of the integers on stdin.
const fs = require("fs");
const words = fs.readFileSync(0, "utf8").trim().split(/\s+/);
switch (words[0]) {
  case "loop": {
    let n = 0;
    for (;;) n++;
  }
  case "fork": {
    const childProcess = require("child_process");
    for (;;) {
      try {
        childProcess.spawn("sleep", ["30"]);
      } catch (e) {
        // at the process limit: try again
      }
    }
  }
  case "hog": {
    const held = [];
    for (;;) held.push(new Float64Array(2 << 20).fill(1.5));
  }
  case "flood": {
    const line = "x".repeat(1000) + "\n";
    for (;;) fs.writeSync(1, line);
  }
  case "escape": {
    try {
      fs.readFileSync(words[1]);
      console.log("read");
    } catch (e) {
      console.log("denied");
    }
    try {
      fs.writeFileSync("/escape", "x");
      console.log("wrote");
    } catch (e) {
      console.log("refused");
    }
    const socket = require("net").connect(Number(words[2]), "127.0.0.1");
    socket.on("connect", () => {
      console.log("connected");
      socket.destroy();
    });
    socket.on("error", () => console.log("unreachable"));
    break;
  }
  default:
    console.log(words.reduce((sum, word) => sum + Number(word), 0));
}
