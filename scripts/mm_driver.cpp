// Times Coulom's mm.cpp on a competition file, its own code doing the work.
//
// mm.cpp (Remi Coulom, 2007) is not copied here: this file includes it from
// Pachi's sources (pattern/training/mm/mm.cpp) and renames its main, so every
// MM update and log-likelihood below is mm.cpp's own.
//
// Build: g++ -O3 -o mm_driver -I PACHI/pattern/training/mm scripts/mm_driver.cpp
// Run:   mm_driver cyclic N < input.dat > gammas.txt   N sweeps, features in file order
//        mm_driver coulom   < input.dat > gammas.txt   mm's own schedule (its main)
// stderr: one line per sweep (cyclic) or a summary (coulom), "key=value" fields;
// stdout: "<index> <gamma>" lines as mm writes them, 17 significant digits.
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <ctime>
#define main coulom_mm_main
#include "mm.cpp"
#undef main

static double cpu_seconds() { return double(std::clock()) / CLOCKS_PER_SEC; }

int main(int argc, char **argv) {
  if (argc < 2 || (std::strcmp(argv[1], "cyclic") && std::strcmp(argv[1], "coulom"))) {
    std::cerr << "usage: mm_driver cyclic N | coulom  < input.dat > gammas.txt\n";
    return 2;
  }
  CGameCollection gcol;
  double t0 = cpu_seconds();
  ReadGameCollection(gcol, std::cin);
  gcol.ComputeVictories();
  double n = gcol.vgame.size();
  const int features = gcol.vFeatureName.size();
  std::cerr << "read_seconds=" << cpu_seconds() - t0 << " positions=" << gcol.vgame.size()
            << " gammas=" << gcol.vGamma.size() << " features=" << features << "\n";
  std::cerr << std::setprecision(17);
  if (!std::strcmp(argv[1], "cyclic")) {
    int sweeps = argc > 2 ? std::atoi(argv[2]) : 30;
    for (int s = 1; s <= sweeps; s++) {
      double t = cpu_seconds();
      for (int f = 0; f < features; f++) gcol.MM(f);
      double mm = cpu_seconds() - t;
      t = cpu_seconds();
      double ll = gcol.LogLikelihood() / n;
      std::cerr << "sweep=" << s << " seconds=" << mm << " ll_seconds=" << cpu_seconds() - t
                << " log_likelihood=" << ll << "\n";
    }
  } else {
    // mm.cpp's main: twice, from every delta at 10, update the feature whose last
    // update gained most until no gain reaches 1e-4 (log-likelihood per position)
    double t = cpu_seconds();
    double ll = gcol.LogLikelihood() / n;
    std::vector<double> delta(features);
    int updates = 0;
    for (int k = 2; --k >= 0;) {
      for (int i = features; --i >= 0;) delta[i] = 10.0;
      while (1) {
        int feature = 0;
        double max_delta = delta[0];
        for (int j = features; --j > 0;)
          if (delta[j] > max_delta) max_delta = delta[feature = j];
        if (max_delta < 0.0001) break;
        gcol.MM(feature);
        double new_ll = gcol.LogLikelihood() / n;
        delta[feature] = new_ll - ll;
        ll = new_ll;
        updates++;
      }
    }
    std::cerr << "updates=" << updates << " seconds=" << cpu_seconds() - t
              << " log_likelihood=" << ll << "\n";
  }
  std::cout << std::setprecision(17);
  WriteRatings(gcol, std::cout, 0);
  return 0;
}
